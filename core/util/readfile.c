/* Whole-file reads with a size cap; see readfile.h. */
#include "util/readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int ks__read_file(const char *path, size_t max, char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (S_ISDIR(st.st_mode)) { /* read(2) would fail; stdio would read it as empty */
        close(fd);
        return -EISDIR;
    }
    if (S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max) {
        close(fd);
        return -EFBIG;
    }
    /* Room for max + 1 bytes (one more than allowed shows the file is too large) and the NUL;
     * a regular file's size is the first guess, a stream starts at 64 KiB and doubles. */
    size_t limit = max + 2 < max ? max : max + 2;
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 2 : 65536;
    if (cap < 4096) /* /proc and /sys files say 0 */
        cap = 4096;
    if (cap > limit)
        cap = limit;
    size_t n = 0;
    char *buf = malloc(cap);
    int rc = 0;
    while (buf) {
        if (n + 1 >= cap) {
            if (cap >= limit) {
                rc = -EFBIG;
                break;
            }
            size_t ncap = cap > limit / 2 ? limit : cap * 2;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                rc = -ENOMEM;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t got = read(fd, buf + n, cap - n - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = -EIO;
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n > max) {
            rc = -EFBIG;
            break;
        }
    }
    close(fd);
    if (!buf)
        return -ENOMEM;
    if (rc) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return 0;
}
