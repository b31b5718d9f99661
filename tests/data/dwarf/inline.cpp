// inline.cpp — a C++ workload for tests/oracle/inline.sh: templates and
// small functions inlined at -O2 (std::sort, std::accumulate, a functor),
// no frame pointers, no libc string routines on the hot path.
#include <algorithm>
#include <cstdlib>
#include <numeric>

template <typename T> static inline T mix(T x)
{
	return static_cast<T>((static_cast<unsigned>(x) * 2654435761u) % 100003u);
}

template <typename T> struct Work {
	T v[4096];
	__attribute__((noinline)) void fill(unsigned seed)
	{
		for (unsigned i = 0; i < 4096; i++)
			v[i] = mix<T>(static_cast<T>(i + seed));
	}
	__attribute__((noinline)) long run()
	{
		std::sort(v, v + 4096);
		return static_cast<long>(std::accumulate(v, v + 4096, T(0)));
	}
};

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 300;
	static Work<unsigned> a;
	static Work<double> b;
	long total = 0;
	for (int r = 0; r < n; r++) {
		a.fill(static_cast<unsigned>(r));
		total += a.run();
		b.fill(static_cast<unsigned>(r));
		total += b.run();
	}
	std::_Exit(total == 42 ? 1 : 0);
}
