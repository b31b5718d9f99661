// shapes.cpp — C++ workload for the perf oracle test of the symbolizer: each
// function below spins long enough to collect samples, and together they
// cover the demangled shapes perf prints differently with and without -v
// (anonymous namespace, templates, static and const members, operators,
// conversion operator, ref-qualifier, constructors/destructors, lambdas).
#include <cstdio>
#include <functional>
#include <map>
#include <string>

static volatile long sink;
#define SPIN for (long i = 0; i < 8000000; i++) sink += i

namespace {
__attribute__((noinline)) void anon_fn(int) { SPIN; }
}
namespace a { namespace b {
template <typename T, int N> struct K {
	__attribute__((noinline)) T const &get(T const &x) const { SPIN; return x; }
	__attribute__((noinline)) static int stat(char *, long (*)(int)) { SPIN; return 0; }
	__attribute__((noinline)) K &operator+=(int) { SPIN; return *this; }
	__attribute__((noinline)) operator long() const { SPIN; return 1; }
	__attribute__((noinline)) bool operator<(K const &) const { SPIN; return false; }
	__attribute__((noinline)) void operator()(int) && { SPIN; }
};
template <typename T> __attribute__((noinline)) unsigned long tf(T) { SPIN; return 1; }
template <typename T> __attribute__((noinline)) std::map<std::string, T> mk(T) { SPIN; return {}; }
}}
struct S {
	__attribute__((noinline)) S() { SPIN; }
	__attribute__((noinline)) ~S() { SPIN; }
};
static long cb(int) { return 0; }

int main()
{
	anon_fn(1);
	a::b::K<double, 3> k;
	double d = 1;
	k.get(d);
	a::b::K<double, 3>::stat(nullptr, cb);
	k += 1;
	long l = k;
	(void)l;
	(void)(k < k);
	std::move(k)(1);
	a::b::tf<short>(1);
	a::b::mk<int>(1);
	{ S s; }
	std::function<int(int)> f = [](int x) { SPIN; return x; };
	f(2);
	std::printf("%ld\n", (long)sink);
	return 0;
}
