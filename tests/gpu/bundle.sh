#!/usr/bin/env bash
# Builds what tests/gpu/run.sh needs, here, into a folder that travels to a
# GPU machine which cannot install packages (the device machine has the CUDA
# toolkit, CMake and Python but no libsqlite3/libdw/libpfm4): latprof, its
# in-app libraries, samples/cuda_pipeline and every shared library they need
# beyond glibc and the C++ runtime, which any Linux has.
#
# usage: tests/gpu/bundle.sh [OUT_DIR]   (default: .gpu in the source tree,
#        ignored by git; name it in the device tool's `carry`)
# Then on the GPU machine: LP_GPU_PREBUILT=.gpu bash tests/gpu/run.sh
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$src/.gpu}
build=${LP_GPU_BUILD:-$src/build-gpu}

cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build.cmake.log" 2>&1 ||
	{ tail -20 "$build.cmake.log"; echo "bundle: configure failed" >&2; exit 1; }
make -C "$build" -j"$(nproc)" latprof latprof_preload latprof_nvtx latprof_cupti cuda_pipeline cuda_truth \
	>"$build.make.log" 2>&1 || { tail -30 "$build.make.log"; echo "bundle: build failed" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib/latprof" "$out/samples" "$out/deps"
cp "$build/bin/latprof" "$out/bin/"
cp "$build"/lib/latprof/*.so "$out/lib/latprof/"
cp "$build/samples/cuda_pipeline" "$build/samples/cuda_truth" "$out/samples/"

# Libraries every target has: glibc's and the compiler runtime. Bundling
# them would replace the target's own, newer ones.
system='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libutil|libresolv|libstdc\+\+|libgcc_s)\.'
for f in "$out"/bin/* "$out"/lib/latprof/*.so "$out"/samples/*; do
	ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r name path; do
	[[ $name =~ $system || $path == "$out"/* || $name == liblatprof_* ]] && continue
	cp -L "$path" "$out/deps/$name"
done
# libcupti is opened with dlopen (never a DT_NEEDED): the one the build used.
cupti=$(sed -n 's/^CUPTI_LIB:FILEPATH=//p' "$build/CMakeCache.txt")
soname=$(objdump -p "$cupti" | awk '$1 == "SONAME" { print $2 }')
cp -L "$cupti" "$out/deps/${soname:-libcupti.so}"
missing=$(for f in "$out"/bin/* "$out"/lib/latprof/*.so "$out"/samples/*; do
	LD_LIBRARY_PATH=$out/deps ldd "$f" | grep "not found" || true; done)
[ -z "$missing" ] || { echo "bundle: unresolved: $missing" >&2; exit 1; }
glibc=$(objdump -T "$out"/bin/* "$out"/lib/latprof/*.so "$out"/samples/* "$out"/deps/* 2>/dev/null |
	grep -o 'GLIBC_2\.[0-9]*' | sort -uV | tail -1)
echo "bundle: $out, $(du -sh "$out" | cut -f1), needs $glibc or newer; deps: $(ls "$out/deps" | tr '\n' ' ')"
