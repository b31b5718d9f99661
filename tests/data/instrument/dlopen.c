/* dlopen.c — functions of a library loaded after start are named too (the
 * runtime records the mappings again at dlopen). Usage: dlopen PLUGIN.so;
 * calls plugin_fn 3 times (plugin_leaf: 6 times). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	void (*fn)(void) = (void (*)(void))dlsym(h, "plugin_fn");
	for (int i = 0; i < 3; i++)
		fn();
	printf("plugin called\n");
	return 0;
}
