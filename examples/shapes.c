/* shapes.c — the demo program: a small "image pipeline" with a few hot
 * functions. Built twice: VERSION=1 (the baseline) and VERSION=2, where
 * blur() got a cheaper inner loop and a new function sharpen() appeared,
 * so `proff diff` has something real to find.
 *
 *   cc -O1 -g -fno-omit-frame-pointer -DVERSION=2 shapes.c -o shapes-v2
 */
#include <stdio.h>
#include <stdlib.h>

#ifndef VERSION
#define VERSION 1
#endif

#define W 256
#define H 256

static volatile unsigned sink;

__attribute__((noinline)) static void fill(unsigned *img, unsigned seed)
{
	for (int i = 0; i < W * H; i++) {
		seed = seed * 1103515245u + 12345u;
		img[i] = (seed >> 16) & 0xff;
	}
}

__attribute__((noinline)) static void blur(const unsigned *in, unsigned *out)
{
	for (int y = 1; y < H - 1; y++)
		for (int x = 1; x < W - 1; x++) {
			unsigned s = 0;
#if VERSION == 1
			for (int dy = -1; dy <= 1; dy++)
				for (int dx = -1; dx <= 1; dx++)
					s += in[(y + dy) * W + (x + dx)] * (unsigned)(2 - abs(dx) - abs(dy) + 1);
#else
			s = in[y * W + x] * 4 + in[(y - 1) * W + x] + in[(y + 1) * W + x] +
			    in[y * W + x - 1] + in[y * W + x + 1];
#endif
			out[y * W + x] = s / 8;
		}
}

#if VERSION == 2
__attribute__((noinline)) static void sharpen(const unsigned *in, unsigned *out)
{
	for (int i = W; i < W * (H - 1); i++)
		out[i] = in[i] * 2 - (in[i - W] + in[i + W]) / 2;
}
#endif

__attribute__((noinline)) static unsigned histogram(const unsigned *img)
{
	unsigned hist[256] = { 0 }, best = 0;
	for (int i = 0; i < W * H; i++)
		hist[img[i] & 0xff]++;
	for (int i = 0; i < 256; i++)
		if (hist[i] > hist[best])
			best = (unsigned)i;
	return best;
}

__attribute__((noinline)) static void process_frame(unsigned *a, unsigned *b, unsigned seed)
{
	fill(a, seed);
	blur(a, b);
#if VERSION == 2
	sharpen(b, a);
#endif
	sink += histogram(b);
}

int main(int argc, char **argv)
{
	int frames = argc > 1 ? atoi(argv[1]) : 300;
	unsigned *a = calloc(W * H, sizeof(*a)), *b = calloc(W * H, sizeof(*b));
	if (!a || !b)
		return 1;
	for (int f = 0; f < frames; f++)
		process_frame(a, b, (unsigned)f);
	printf("shapes v%d: %d frames, checksum %u\n", VERSION, frames, sink);
	free(a);
	free(b);
	return 0;
}
