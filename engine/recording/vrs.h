/* SPDX-License-Identifier: MIT */
/*
 * A reader for VRS files (the record container of Project Aria, written to
 * the published format of facebookresearch/vrs) that finds the image
 * frames of one stream and gives back their stored JPEG bytes with their
 * capture times. docs/recordings.md, "VRS files", describes what is read.
 *
 * What it reads: the file header (magic "VisionRecord", format VRS1..VRS3,
 * header sizes), the description record (each stream's tags, among them
 * its record formats "RF:<type>:<version>" and data layouts
 * "DL:<type>:<version>:<block>"), the index record (classic, format 2, or
 * split-head, format 3; zstd-compressed or not; a file without an index is
 * scanned record by record), then the stream's configuration record
 * (image_width, image_height, nominal_rate) and data records: their
 * content blocks (data_layout, image/jpg, ...), the DataLayout field
 * capture_timestamp_ns (the record timestamp when there is none), and the
 * JPEG block. Records compressed with zstd or lz4 are decompressed.
 *
 * Errors: every function returns 0 or a negative enum eng_err, with
 * err_msg() naming the file and the byte offset at fault: ENG_EIO (cannot
 * read), ENG_EPARSE (bad magic, truncated file, a record or index entry
 * that overruns the file, a broken compressed block, a malformed
 * description or data layout), ENG_ENOENT (no such stream or no frame),
 * ENG_EINVAL (not an image stream, or its images are not JPEG), ENG_ENOMEM. No input
 * makes it read outside what it allocated (tests/fuzz/fuzz_vrs.c).
 *
 * Memory: a struct vrs_file is an opaque handle that owns its file
 * descriptor and tables; vrs_close() frees it. Buffers returned through
 * **out are the caller's to free(). vrs_read_jpeg(), vrs_frame() and the
 * other getters may run in several threads at once on one handle (they
 * only read, through pread); opening and closing are one thread's.
 */
#ifndef VRS_H
#define VRS_H

#include <stddef.h>
#include <stdint.h>

/* The Aria RGB camera stream: recordable type 214, instance 1 ("214-1"). */
#define VRS_TYPE_RGB_CAMERA 214
#define VRS_INSTANCE_RGB 1

struct vrs_file;

/* One image frame of the stream. */
struct vrs_frame {
	int64_t t_ns;        /* capture time, device clock, ns */
	double record_s;     /* the record's own timestamp, s */
	int64_t offset;      /* byte offset of its record in the file */
	uint32_t size;       /* record size, header included */
};

/*
 * Opens the VRS file at `path` and indexes the data records of stream
 * type_id-instance (VRS_TYPE_RGB_CAMERA, VRS_INSTANCE_RGB for Aria RGB).
 * On success stores a new handle in *out and returns 0; the frames are in
 * time order. A stream with no data record is ENG_ENOENT.
 */
int vrs_open(const char *path, int32_t type_id, uint16_t instance,
	     struct vrs_file **out);

/* Closes the file and frees everything. vrs_close(NULL) is a no-op. */
void vrs_close(struct vrs_file *f);

/* Number of frames (>= 1 on an open handle). Can't fail. */
size_t vrs_frame_count(const struct vrs_file *f);

/* Frame i (i < vrs_frame_count()); the pointer lives as long as f. */
const struct vrs_frame *vrs_frame(const struct vrs_file *f, size_t i);

/*
 * The stored image size from the configuration record (image_width,
 * image_height) and its nominal frame rate (nominal_rate; 0 when not
 * given); width and height are 0 when the file does not say. Can't fail.
 */
void vrs_image_size(const struct vrs_file *f, int *width, int *height, double *rate_hz);

/*
 * Reads frame i's JPEG block as stored (Aria RGB frames lie rotated by 90
 * degrees: see video.h for the upright view). Stores a new buffer in *out
 * and its length in *len. Returns 0, ENG_EPARSE when the record is broken
 * or its image block does not start with a JPEG marker, ENG_EIO, or
 * ENG_ENOMEM.
 */
int vrs_read_jpeg(struct vrs_file *f, size_t i, uint8_t **out, size_t *len);

/* The path the file was opened with (owned by f). */
const char *vrs_path(const struct vrs_file *f);

#endif /* VRS_H */
