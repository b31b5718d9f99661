/* demangle.c — C++ symbol demangling through libstdc++'s __cxa_demangle.
 *
 * perf 6.1 prints demangled names without their function type by default
 * (libiberty's DMGL_NO_OPTS: "ns::W<long>::spin", not "...::spin(long)"),
 * and the full name with -v. __cxa_demangle always gives the full form, so
 * the short form is cut out of it: drop " [clone .x]" suffixes, trailing
 * cv/ref qualifiers, the outermost parameter list, and a template function's
 * return type.
 */
#include "symbol-int.h"

#include <stdlib.h>
#include <string.h>

extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);
	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

/* Length of the "operator..." token starting at s (s points at "operator"). */
static size_t operator_len(const char *s)
{
	static const char *const ops[] = {
		"operator new[]", "operator delete[]", "operator new", "operator delete",
		"operator<=>", "operator<<=", "operator>>=", "operator->*", "operator()", "operator[]",
		"operator<<", "operator>>", "operator<=", "operator>=", "operator->", "operator==",
		"operator!=", "operator&&", "operator||", "operator++", "operator--", "operator+=",
		"operator-=", "operator*=", "operator/=", "operator%=", "operator&=", "operator|=",
		"operator^=", "operator<", "operator>", "operator+", "operator-", "operator*",
		"operator/", "operator%", "operator^", "operator&", "operator|", "operator~",
		"operator!", "operator=", "operator,", "operator\"\" ",
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t k = strlen(ops[i]);
		if (strncmp(s, ops[i], k) == 0)
			return k;
	}
	return 8;   /* conversion operator: "operator" then a type */
}

static bool word_start(const char *base, const char *p)
{
	return p == base || p[-1] == ':' || p[-1] == ' ' || p[-1] == '(' || p[-1] == '<' || p[-1] == ',';
}

/* Cut the full demangled form down to the bare qualified name, in place. */
static void strip_function_type(char *s)
{
	size_t n = strlen(s);
	/* " [clone .cold]" suffixes (libiberty without params ignores them) */
	for (;;) {
		if (n && s[n - 1] == ']') {
			char *c = strstr(s, " [clone ");
			if (c) {
				n = (size_t)(c - s);
				s[n] = '\0';
				continue;
			}
		}
		break;
	}
	/* trailing qualifiers of a member function */
	for (bool again = true; again;) {
		again = false;
		static const char *const quals[] = { " const", " volatile", " &&", " &", " noexcept" };
		for (size_t i = 0; i < sizeof(quals) / sizeof(quals[0]); i++) {
			if (n && s[n - 1] != ')' && ends_with(s, n, quals[i])) {
				n -= strlen(quals[i]);
				s[n] = '\0';
				again = true;
			}
		}
	}
	if (!n || s[n - 1] != ')')
		return;
	/* matching '(' of the parameter list */
	int depth = 0;
	size_t i = n;
	while (i > 0) {
		char ch = s[--i];
		if (ch == ')')
			depth++;
		else if (ch == '(' && --depth == 0)
			break;
	}
	if (depth != 0 || i == 0)
		return;
	n = i;
	s[n] = '\0';
	/* return type: the last top-level space outside any operator token */
	size_t cut = 0;
	int d = 0;
	for (size_t k = 0; k < n; k++) {
		char ch = s[k];
		if (d == 0 && ch == 'o' && strncmp(s + k, "operator", 8) == 0 && word_start(s, s + k)) {
			size_t ol = operator_len(s + k);
			if (ol == 8)
				break;  /* conversion operator: the rest is its type */
			k += ol - 1;
			continue;
		}
		if (ch == '(' || ch == '<' || ch == '[' || ch == '{')
			d++;
		else if ((ch == ')' || ch == '>' || ch == ']' || ch == '}') && d > 0)
			d--;
		else if (ch == ' ' && d == 0)
			cut = k + 1;
	}
	if (cut)
		memmove(s, s + cut, n - cut + 1);
}

char *sym_demangle(const char *name, bool with_params)
{
	int status = 0;
	char *out = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0 || !out) {
		free(out);
		return NULL;
	}
	if (!with_params)
		strip_function_type(out);
	return out;
}
