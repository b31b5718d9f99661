/* util.c — a second source file for the stream test workload. */

long util_mix(long n)
{
	long s = 5;
	for (long i = 0; i < n; i++)
		for (long j = 0; j < 40; j++)
			s = s * 7 + (j & 3);
	return s;
}
