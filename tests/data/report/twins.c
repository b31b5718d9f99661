/* twins.c — workload for tests/oracle/report-group.sh: two functions of
 * one name, `spin`, one in the executable and one in a shared library
 * (built from this file with -DTWIN_LIB), each file-local, hot for a
 * different time. With `-s sym` perf keeps them two rows (its sort__sym_cmp
 * compares the dso, then the symbol's addresses, not the name), and an
 * event group's members are paired with the leader's rows by that
 * comparator too (as the executable's and the dynamic linker's `_start`).
 */
static volatile double sink;

#define BURN(n) do { double x = 0; for (long i = 0; i < (n); i++) x += (double)i * 1.000001; sink += x; } while (0)

#ifdef TWIN_LIB
__attribute__((noinline)) static void spin(long n) { BURN(n); }
void twin_lib_spin(long n) { spin(n); }
#else
void twin_lib_spin(long n);
__attribute__((noinline)) static void spin(long n) { BURN(n); }
int main(void)
{
	spin(60000000);            /* the executable's: about twice the library's */
	twin_lib_spin(30000000);
	return 0;
}
#endif
