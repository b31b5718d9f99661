// work.cpp — a C++ workload for tests/oracle/dwarf.sh: templates and
// standard containers inlined at -O2, exceptions' unwind tables, no frame
// pointers; it ends by _Exit.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

template <typename T> struct Acc {
	std::vector<T> v;
	__attribute__((noinline)) void fill(int n) {
		for (int i = 0; i < n; i++)
			v.push_back(static_cast<T>((i * 2654435761u) % 1000));
	}
	__attribute__((noinline)) T sorted_sum() {
		std::sort(v.begin(), v.end());
		T s = 0;
		for (const T &x : v)
			s += x;
		return s;
	}
};

__attribute__((noinline)) static long count_words(int n)
{
	std::map<std::string, long> m;
	for (int i = 0; i < n; i++)
		m[std::to_string(i % 500)] += i;
	return static_cast<long>(m.size());
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 300;
	long total = 0;
	for (int r = 0; r < n; r++) {
		Acc<double> a;
		a.fill(4000);
		total += static_cast<long>(a.sorted_sum());
		Acc<int> b;
		b.fill(3000);
		total += b.sorted_sum();
		total += count_words(2000);
	}
	// no exit handlers: perf's unwinder (libunwind) and libdw part ways
	// in _fini, which has no CFI (docs/symbols.md)
	std::_Exit(total == 42 ? 1 : 0);
}
