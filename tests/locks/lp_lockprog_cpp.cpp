// SPDX-License-Identifier: MIT
// C++ names in the lock report: 4 threads contend on a namespaced global
// std::mutex `ns::g_model_mutex` from ns::Worker::run(), and on a static
// member `ns::Cache::s_mutex` from ns::Cache::get(int). The importer must
// show those names demangled, never as _ZN2ns... symbols.
//
//   lp_lockprog_cpp [ITERATIONS]    prints "iterations N"
#include <pthread.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace ns
{

std::mutex g_model_mutex;
volatile unsigned long g_sink;

// Sleeping while holding a lock makes the others queue on any number of
// cores, so contention does not depend on the machine's load.
void hold()
{
	std::this_thread::sleep_for(std::chrono::microseconds(20));
}

void work(int n)
{
	for (int i = 0; i < n; i++)
		g_sink = g_sink + static_cast<unsigned long>(i) * 2654435761u;
}

struct Cache {
	static std::mutex s_mutex;
	__attribute__((noinline)) int get(int key);
};

std::mutex Cache::s_mutex;

int Cache::get(int key)
{
	std::lock_guard<std::mutex> g(s_mutex);
	hold();
	return key * 2;
}

class Worker
{
      public:
	Worker(int idx, int iters) : idx_(idx), iters_(iters)
	{
	}
	__attribute__((noinline)) void run();

      private:
	int idx_, iters_;
	Cache cache_;
};

void Worker::run()
{
	char name[16];
	std::snprintf(name, sizeof(name), "worker-%d", idx_);
	pthread_setname_np(pthread_self(), name);
	for (int i = 0; i < iters_; i++) {
		{
			std::lock_guard<std::mutex> g(g_model_mutex);
			work(2000);
			if (i % 2 == 0)
				hold();
		}
		work(500);
	}
	for (int i = 0; i < iters_ / 2; i++) {
		g_sink = g_sink + static_cast<unsigned long>(cache_.get(i));
		work(500);
	}
}

} // namespace ns

int main(int argc, char **argv)
{
	int iters = argc > 1 ? std::atoi(argv[1]) : 300;
	std::vector<std::thread> t;
	for (int i = 0; i < 4; i++)
		t.emplace_back([i, iters] { ns::Worker(i, iters).run(); });
	for (auto &th : t)
		th.join();
	std::printf("iterations %d\n", iters);
	return 0;
}
