// progpp.cpp — C++ test program for demangling: a namespace, a class
// template with a const method, a function template and an overloaded
// operator. Built at test time by build.sh.
#include <cstdio>
#include <vector>

namespace shapes {
template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T get(int k) const { return v * k; }
};
template <typename T> __attribute__((noinline)) T twice(T x) { return x + x; }
struct Vec { int x; };
__attribute__((noinline)) bool operator<(const Vec &a, const Vec &b) { return a.x < b.x; }
}

int main(int argc, char **)
{
	shapes::Box<int> b{argc};
	std::vector<int> v;
	v.push_back(b.get(3));
	shapes::Vec p{1}, q{argc};
	std::printf("%d %ld %d\n", v[0], shapes::twice<long>(argc), p < q);
	return 0;
}
