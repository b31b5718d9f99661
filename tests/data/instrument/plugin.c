/* plugin.c — shared library loaded with dlopen by dlopen.c (built with
 * -finstrument-functions -fPIC -shared). plugin_fn calls plugin_leaf twice. */
static volatile int sink;

__attribute__((noinline)) void plugin_leaf(void) { sink++; }

void plugin_fn(void)
{
	plugin_leaf();
	plugin_leaf();
}
