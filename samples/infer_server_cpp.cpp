// SPDX-License-Identifier: MIT
// infer_server_cpp: the C++ flavour of samples/infer_server.c, written the
// way C++ servers use NVTX: nvtx3.hpp scoped ranges in a custom domain,
// registered strings for the stage names, a named category, and a
// request-id payload on the outer range.
//
//   infer_server_cpp [--requests N] [--threads N] [--decode-us U]
//                    [--pre-us U] [--infer-us U] [--post-us U]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <nvtx3/nvtx3.hpp>

namespace
{

struct infer_domain {
	static constexpr char const *name{"infer"};
};
struct msg_request {
	static constexpr char const *message{"request"};
};
struct msg_decode {
	static constexpr char const *message{"decode"};
};
struct msg_pre {
	static constexpr char const *message{"preprocess"};
};
struct msg_infer {
	static constexpr char const *message{"infer"};
};
struct msg_post {
	static constexpr char const *message{"postprocess"};
};
struct cat_stage {
	static constexpr char const *name{"stage"};
	static constexpr uint32_t id{7};
};

using scoped = nvtx3::scoped_range_in<infer_domain>;
using reg = nvtx3::registered_string_in<infer_domain>;
using cat = nvtx3::named_category_in<infer_domain>;

long cost_us[4] = {2100, 1800, 6400, 700};
long n_requests = 100;
int n_threads = 2;
std::atomic<long> next_request{0};

void spin_us(long us)
{
	auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
	while (std::chrono::steady_clock::now() < end) {
	}
}

template <class Msg> void stage(long us)
{
	scoped r{reg::get<Msg>(), cat::get<cat_stage>()};
	spin_us(us);
}

void worker()
{
	for (;;) {
		long id = next_request.fetch_add(1);
		if (id >= n_requests)
			return;
		scoped r{reg::get<msg_request>(), nvtx3::payload{static_cast<uint64_t>(id)},
			 nvtx3::rgb{51, 102, 204}};
		stage<msg_decode>(cost_us[0]);
		stage<msg_pre>(cost_us[1]);
		stage<msg_infer>(cost_us[2]);
		stage<msg_post>(cost_us[3]);
	}
}

long num(const char *opt, const char *s)
{
	char *end;
	long v = std::strtol(s, &end, 10);
	if (*end || v < 0) {
		std::fprintf(stderr, "infer_server_cpp: %s takes a number, not '%s'\n", opt, s);
		std::exit(2);
	}
	return v;
}

} // namespace

int main(int argc, char **argv)
{
	const char *names[] = {"--decode-us", "--pre-us", "--infer-us", "--post-us"};
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc) {
			std::fprintf(stderr, "infer_server_cpp: %s needs a value\n", argv[i]);
			return 2;
		}
		const char *a = argv[i], *v = argv[++i];
		bool done = false;
		for (int k = 0; k < 4; k++)
			if (!std::strcmp(a, names[k]))
				cost_us[k] = num(a, v), done = true;
		if (!std::strcmp(a, "--requests"))
			n_requests = num(a, v), done = true;
		else if (!std::strcmp(a, "--threads"))
			n_threads = static_cast<int>(num(a, v)), done = true;
		if (!done) {
			std::fprintf(stderr, "infer_server_cpp: unknown option '%s'\n", a);
			return 2;
		}
	}
	std::vector<std::thread> th;
	for (int i = 0; i < n_threads; i++)
		th.emplace_back(worker);
	for (auto &t : th)
		t.join();
	std::printf("infer_server_cpp: %ld requests on %d threads\n", n_requests, n_threads);
	return 0;
}
