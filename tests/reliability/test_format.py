"""Every C and C++ file of the repository follows its .clang-format
(the project's style rule): the lint tier fails on a file that drifts
and names it. `clang-format -i FILE` formats one."""
import os
import re
import shutil
import subprocess

from lptest import SRC, check, skip

cf = shutil.which("clang-format") or shutil.which("clang-format-14")
if not cf:
    skip("clang-format is not installed (apt-get install clang-format)")
ls = subprocess.run(["git", "-C", SRC, "ls-files", "*.c", "*.h", "*.cpp"], capture_output=True,
                    text=True)
if ls.returncode != 0:
    skip("the sources are not a git checkout: no list of the repository's files")
files = [f for f in ls.stdout.split() if os.path.exists(os.path.join(SRC, f))]
check(len(files) > 150, f"the check sees the tree ({len(files)} C and C++ files)")
p = subprocess.run([cf, "--dry-run", "-Werror", "--style=file", *files], cwd=SRC,
                   capture_output=True, text=True)
drift = sorted({m.group(1) for m in re.finditer(r"^(\S+?):\d+:\d+: error", p.stderr, re.M)})
check(p.returncode == 0 and not drift,
      f"{len(files)} files follow .clang-format" + "".join(f"\n  clang-format -i {f}" for f in drift))
