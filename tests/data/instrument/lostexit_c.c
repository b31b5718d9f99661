/* lostexit_c.c — C code without exception tables' cleanups (no
 * -fexceptions): the exception of lostexit.cc unwinds through middle() and
 * its exit hook never runs. */
void thrower(int i);

__attribute__((noinline)) void middle(int i)
{
	thrower(i);
	thrower(i + 1);
}
