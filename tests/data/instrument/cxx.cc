// cxx.cc — C++ as the standard library makes it at -O2: templates, lambdas,
// std::sort and std::map (their many small instrumented functions are
// inlined into their callers and keep their hooks), an exception thrown
// through 10 frames of descend() and caught, and 8 std::threads running
// work(). Built with and without -fno-omit-frame-pointer by
// tests/oracle/uftrace.sh, which compares the whole tree with uftrace's.
// burn() has 20-40 us of work per call, burn2() twice as much (times are
// compared there).
#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <thread>
#include <vector>

static volatile long sink;

template <typename T> struct Box {
	std::vector<T> v;
	T sum() const
	{
		T s{};
		for (const auto &x : v)
			s += x;
		return s;
	}
};

template <typename T, typename F> long count_if_below(const std::vector<T> &v, F pred)
{
	return std::count_if(v.begin(), v.end(), pred);
}

__attribute__((noinline)) void descend(int depth)
{
	if (depth == 0)
		throw std::runtime_error("deep");
	descend(depth - 1);
	sink++;
}

__attribute__((noinline)) void burn()
{
	/* summed in a register (the asm keeps the compiler from vectorizing it or
	 * closing the sum): a volatile store and load per iteration ran 1x or 3x
	 * slower by the CPU's store forwarding, run to run, function to function */
	long s = 0;
	for (long i = 0; i < 60000; i++) {
		s += i ^ (i >> 3);
		__asm__ volatile("" : "+r"(s));
	}
	sink += s;
}

__attribute__((noinline)) void burn2()
{
	/* summed in a register (the asm keeps the compiler from vectorizing it or
	 * closing the sum): a volatile store and load per iteration ran 1x or 3x
	 * slower by the CPU's store forwarding, run to run, function to function */
	long s = 0;
	for (long i = 0; i < 120000; i++) {
		s += i ^ (i >> 3);
		__asm__ volatile("" : "+r"(s));
	}
	sink += s;
}

__attribute__((noinline)) long work(int seed)
{
	std::vector<int> v;
	for (int i = 0; i < 64; i++)
		v.push_back((i * 7919 + seed) % 101);
	std::sort(v.begin(), v.end(), [](int a, int b) { return a > b; });
	std::map<int, int> m;
	for (int x : v)
		m[x % 16]++;
	Box<int> b{v};
	long caught = 0;
	for (int i = 0; i < 3; i++) {
		try {
			descend(9);          // 10 frames of descend, the last one throws
		} catch (const std::exception &) {
			caught++;
		}
	}
	int lim = 50;
	return count_if_below(v, [lim](int x) { return x < lim; }) + b.sum() + (long)m.size() + caught;
}

int main()
{
	std::vector<std::thread> ts;
	long r[8];
	for (int i = 0; i < 8; i++)
		ts.emplace_back([&r, i] { r[i] = work(i); });
	for (auto &t : ts)
		t.join();
	for (int i = 0; i < 30; i++) {
		burn();
		burn2();
	}
	long s = 0;
	for (long x : r)
		s += x;
	std::printf("%ld\n", s);
	return 0;
}
