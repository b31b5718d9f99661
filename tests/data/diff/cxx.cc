// cxx.cc — C++ test workload for proff diff: the hot functions are a class
// template member, an overloaded function and a lambda inside a namespace, so
// rows show demangled names ("shapes::Area<double>::compute(long)").
// Usage: cxx A|B; CXX_UNIT=n scales the loops.
#include <cstdio>
#include <cstdlib>

namespace shapes {
static volatile double sink;
static long unit = 20000000L;

template <typename T> struct Area {
	__attribute__((noinline)) static void compute(long n)
	{
		T x = 0;
		for (long i = 0; i < n * unit; i++)
			x += (T)i * (T)1.000001;
		sink += (double)x;
	}
};

__attribute__((noinline)) void scale(int n)
{
	double x = 0;
	for (long i = 0; i < n * unit; i++)
		x += (double)i * 0.5;
	sink += x;
}

__attribute__((noinline)) void scale(double n)
{
	double x = 0;
	for (long i = 0; i < (long)n * unit; i++)
		x += (double)i * 0.25;
	sink += x;
}
} // namespace shapes

int main(int argc, char **argv)
{
	bool b = argc > 1 && argv[1][0] == 'B';
	if (getenv("CXX_UNIT"))
		shapes::unit = atol(getenv("CXX_UNIT"));
	shapes::Area<double>::compute(b ? 10 : 30);
	shapes::Area<long>::compute(b ? 20 : 10);
	shapes::scale(b ? 20 : 5);
	shapes::scale(b ? 2.0 : 10.0);
	std::printf("%f\n", (double)shapes::sink);
	return 0;
}
