/* hot.c — the hot loops of the stream test workload. */

static long step(long x, long i)
{
	return (x * 31 + i) ^ (x >> 3);
}

long alpha(long n)
{
	long s = 1;
	for (long i = 0; i < n; i++)
		for (long j = 0; j < 40; j++)
			s = step(s, j);
	return s;
}

long beta(long n)
{
	long s = 7;
	for (long i = 0; i < n; i++)
		for (long j = 0; j < 40; j++)
			s += (s << 1) ^ j;
	return s;
}

long gamma_(long n)
{
	long s = 3;
	for (long i = 0; i < n; i++)
		for (long j = 0; j < 40; j++)
			s = step(s, i + j);
	return s;
}
