/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for engine/recording/vrs.h: arbitrary bytes read as a
 * VRS file, for the Aria RGB stream and for the first other stream the
 * index names, every frame's JPEG read back. vrs_open() takes a path, so
 * the input is written to an in-memory file (memfd) opened through
 * /proc/self/fd. Seeds: tests/fuzz/corpus/fuzz_vrs/ (small VRS files
 * written to the published format: split-head, classic and no index,
 * lz4 and zstd records, and broken ones).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vrs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char memfd_path[64];

/* Replaces the memfd's contents by data[0..size); 0 or -1. */
static int put_input(const uint8_t *data, size_t size)
{
	size_t off = 0;

	if (memfd < 0) {
		memfd = memfd_create("fuzz_vrs", 0);
		if (memfd < 0)
			return -1;
		snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0))
		return -1;
	while (off < size) {
		ssize_t n = pwrite(memfd, data + off, size - off, (off_t)off);

		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

static void read_all(int32_t type, uint16_t inst)
{
	struct vrs_file *f = NULL;
	size_t i, n;
	int w, h;
	double rate;

	if (vrs_open(memfd_path, type, inst, &f))
		return;
	n = vrs_frame_count(f);
	if (!n)
		abort(); /* an open handle has frames */
	vrs_image_size(f, &w, &h, &rate);
	for (i = 0; i < n && i < 64; i++) {
		const struct vrs_frame *fr = vrs_frame(f, i);
		uint8_t *jpg = NULL;
		size_t len = 0;

		if (i && fr->t_ns < vrs_frame(f, i - 1)->t_ns)
			abort(); /* frames are in time order */
		if (!vrs_read_jpeg(f, i, &jpg, &len)) {
			if (len < 2 || jpg[0] != 0xff || jpg[1] != 0xd8)
				abort();
			free(jpg);
		}
	}
	vrs_close(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (put_input(data, size))
		abort();
	read_all(VRS_TYPE_RGB_CAMERA, VRS_INSTANCE_RGB);
	read_all(1201, 1);
	return 0;
}
