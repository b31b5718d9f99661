// exceptions.cc — C++ exceptions unwinding through instrumented frames.
// Each round: outer() -> mid(5) -> ... -> mid(1) -> thrower() throws, caught
// in outer(). 100 rounds. Calls: outer = 100, mid = 500, thrower = 100.
#include <cstdio>
#include <stdexcept>

static volatile int sink;

__attribute__((noinline)) void thrower() { sink++; throw std::runtime_error("x"); }

__attribute__((noinline)) void mid(int n)
{
	sink++;
	if (n <= 1)
		thrower();
	else
		mid(n - 1);
	sink++;
}

__attribute__((noinline)) void outer()
{
	try {
		mid(5);
	} catch (const std::exception &) {
		sink++;
	}
}

int main()
{
	for (int i = 0; i < 100; i++)
		outer();
	std::printf("caught %d\n", 100);
	return 0;
}
