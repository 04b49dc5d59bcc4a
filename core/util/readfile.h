/*
 * Reading a whole input file (the configuration, a kubeconfig and the files it names, a cluster
 * file) into memory with a size cap, so that `--cluster /dev/zero` or a runaway file ends in a
 * message instead of exhausting memory, and a directory is refused instead of reading as empty.
 *
 * Threads: any; no shared state.
 */
#ifndef KS_CORE_READFILE_H
#define KS_CORE_READFILE_H

#include <stddef.h>

/* Reads the file at path (a regular file, or a stream such as a pipe or /dev/stdin) into a
 * malloc'd buffer with a NUL after the data; *len (when not NULL) gets the byte count. A file of
 * exactly max bytes is read; one byte more is refused (a regular file by its size, before reading).
 * Returns 0, or a negative errno: -EISDIR for a directory, -EFBIG over the cap, -ENOMEM, -EIO when
 * reading fails, and open(2)'s errno when the file cannot be opened. *out is untouched on error. */
int ks__read_file(const char *path, size_t max, char **out, size_t *len);

#endif
