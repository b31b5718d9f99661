// lostexit.cc — exits that never come: middle() (lostexit_c.c, C built
// without -fexceptions) calls thrower(), whose exception unwinds through
// middle() to main, 50 times. The compiler runs the exit hooks of the C++
// frames while unwinding, not middle()'s: the reader finds its exits
// missing by frame address (lost exits, counted, warned about).
// Calls by construction: main 1, middle 50, thrower 50, after 50.
#include <cstdio>
#include <stdexcept>

extern "C" void middle(int i);
static volatile int sink;

extern "C" __attribute__((noinline)) void thrower(int i)
{
	sink += i;
	throw std::runtime_error("x");
}

__attribute__((noinline)) void after() { sink++; }

int main()
{
	for (int i = 0; i < 50; i++) {
		try {
			middle(i);
		} catch (const std::exception &) {
		}
		after();
	}
	std::printf("%d\n", sink);
	return 0;
}
