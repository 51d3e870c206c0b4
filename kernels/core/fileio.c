#include "fileio.h"

#include "params.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

const char *const cbk_write_mode_names[] = {
    [CBK_WRITE_FSYNC] = "fsync", [CBK_WRITE_BUFFERED] = "buffered", [CBK_WRITE_DIRECT] = "direct", NULL,
};
const char *const cbk_read_mode_names[] = {
    [CBK_READ_COLD] = "cold", [CBK_READ_WARM] = "warm", [CBK_READ_DIRECT] = "direct", [CBK_READ_NONE] = "none", NULL,
};

/* bytes in the binary unit cbk_format_size gives `like`, to one decimal
 * unless whole: "needs 100 GiB, 74.6 GiB is free", never two units. */
static const char *format_in_unit_of(uint64_t bytes, uint64_t like, char *buf, size_t len)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    while (u < 4 && like >= 1024 && like % 1024 == 0) {
        like /= 1024;
        u++;
    }
    double v = (double)bytes / (double)(1ULL << (10 * u));
    snprintf(buf, len, v == floor(v) ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

/* File systems whose statvfs says 0 blocks. Some hold files with no size
 * to report (ramfs, tmpfs mounted with size=0, a FUSE file system that
 * leaves the figure out): the space check has nothing to compare with and
 * passes, as the inode check does where f_files is 0. The others are the
 * kernel's views of itself, where a directory holds no files: their "0
 * blocks free" told a user of --dir=/proc the disk was full. */
static const unsigned long sizeless_types[] = { RAMFS_MAGIC, TMPFS_MAGIC, FUSE_SUPER_MAGIC };
static const struct {
    unsigned long type;
    const char *name;
} no_file_types[] = {
    { PROC_SUPER_MAGIC, "proc" },     { SYSFS_MAGIC, "sysfs" },           { CGROUP_SUPER_MAGIC, "cgroup" },
    { CGROUP2_SUPER_MAGIC, "cgroup2" }, { DEVPTS_SUPER_MAGIC, "devpts" }, { DEBUGFS_MAGIC, "debugfs" },
    { TRACEFS_MAGIC, "tracefs" },     { SECURITYFS_MAGIC, "securityfs" }, { BPF_FS_MAGIC, "bpf" },
    { PSTOREFS_MAGIC, "pstore" },     { EFIVARFS_MAGIC, "efivarfs" },     { BINFMTFS_MAGIC, "binfmt_misc" },
    { SELINUX_MAGIC, "selinuxfs" },   { SMACK_MAGIC, "smackfs" },         { NSFS_MAGIC, "nsfs" },
    { AUTOFS_SUPER_MAGIC, "autofs" }, { 0x62656570, "configfs" },         { 0x19800202, "mqueue" },
    { 0x65735543, "fusectl" },        { 0x958458f6, "hugetlbfs" },
};

/* `dir`'s file system reports 0 blocks (fs->f_blocks): 0 if it holds files
 * all the same, else -1 and a line naming its type. */
static int check_holds_files(const char *dir, char *why, size_t why_len)
{
    struct statfs sf;
    if (statfs(dir, &sf)) {
        snprintf(why, why_len, "target directory %s: statfs: %s", dir, strerror(errno));
        return -1;
    }
    unsigned long type = (unsigned long)sf.f_type;
    for (size_t i = 0; i < sizeof sizeless_types / sizeof *sizeless_types; i++)
        if (type == sizeless_types[i])
            return 0;
    for (size_t i = 0; i < sizeof no_file_types / sizeof *no_file_types; i++)
        if (type == no_file_types[i].type) {
            snprintf(why, why_len, "target directory %s is on a %s file system, which does not hold files", dir,
                     no_file_types[i].name);
            return -1;
        }
    snprintf(why, why_len, "target directory %s is on a file system that reports no blocks (type 0x%lx), so it "
             "does not hold files", dir, type);
    return -1;
}

/* `dir` exists, is a directory cbk may write in; fills `fs`. */
static int check_usable_dir(const char *dir, struct statvfs *fs, char *why, size_t why_len)
{
    struct stat st;
    if (stat(dir, &st)) {
        snprintf(why, why_len, "target directory %s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, why_len, "target %s is not a directory", dir);
        return -1;
    }
    if (statvfs(dir, fs)) {
        snprintf(why, why_len, "target directory %s: statvfs: %s", dir, strerror(errno));
        return -1;
    }
    if (fs->f_blocks == 0 && check_holds_files(dir, why, why_len))
        return -1;
    if (fs->f_flag & ST_RDONLY) {
        snprintf(why, why_len, "target directory %s is on a read-only file system", dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK)) {
        snprintf(why, why_len, "target directory %s is not writable: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

static int check_space(const char *dir, const struct statvfs *fs, uint64_t rank_bytes, int ranks, char *why,
                       size_t why_len)
{
    if (fs->f_blocks == 0)
        return 0; /* no size reported (check_holds_files): nothing to compare with */
    uint64_t avail = (uint64_t)fs->f_bavail * fs->f_frsize, sharing = ranks > 1 ? (uint64_t)ranks : 1;
    if (rank_bytes > UINT64_MAX / sharing) {
        char one[32];
        snprintf(why, why_len, "not enough space in %s: the run needs %d x %s, more than 16 EiB", dir, ranks,
                 cbk_format_size(rank_bytes, one, sizeof one));
        return -1;
    }
    uint64_t need_bytes = rank_bytes * sharing;
    if (need_bytes > avail) {
        char need[32], have[32];
        cbk_format_size(need_bytes, need, sizeof need);
        snprintf(why, why_len, "not enough space in %s: the run needs %s, %s is free", dir, need,
                 format_in_unit_of(avail, need_bytes, have, sizeof have));
        return -1;
    }
    return 0;
}

int cbk_check_target_dir(const char *dir, uint64_t rank_bytes, int ranks, char *why, size_t why_len)
{
    struct statvfs fs;
    if (check_usable_dir(dir, &fs, why, why_len))
        return -1;
    return check_space(dir, &fs, rank_bytes, ranks, why, why_len);
}

/* What one file takes at least: f_frsize, the unit statvfs counts free
 * space in, is a local file system's block (ext4, XFS, btrfs, tmpfs: 4 KiB;
 * tmpfs on 64 KiB pages: 64 KiB). Above 64 KiB it is a transfer or record
 * size (NFS reports its wsize, 1 MiB; ZFS its recordsize; CephFS its object
 * size) while the server packs a small file into far less, so 4 KiB is
 * counted there: the check must never refuse a run that fits. */
static uint64_t file_unit_bytes(const struct statvfs *fs)
{
    uint64_t unit = fs->f_frsize ? (uint64_t)fs->f_frsize : (uint64_t)fs->f_bsize;
    return unit && unit <= 65536 ? unit : 4096;
}

int cbk_check_target_files(const char *dir, uint64_t file_bytes, uint64_t files, int ranks, char *why,
                           size_t why_len)
{
    struct statvfs fs;
    if (check_usable_dir(dir, &fs, why, why_len))
        return -1;
    uint64_t unit = file_unit_bytes(&fs);
    uint64_t blocks = file_bytes / unit + (file_bytes % unit != 0);
    if (files && blocks > UINT64_MAX / unit / files) {
        char one[32];
        snprintf(why, why_len, "not enough space in %s: %llu files of %s each are more than 16 EiB", dir,
                 (unsigned long long)files, cbk_format_size(file_bytes, one, sizeof one));
        return -1;
    }
    return check_space(dir, &fs, blocks * unit * files, ranks, why, why_len);
}

int cbk_check_target_inodes(const char *dir, uint64_t rank_inodes, int ranks, char *why, size_t why_len)
{
    struct statvfs fs;
    if (statvfs(dir, &fs)) {
        snprintf(why, why_len, "target directory %s: statvfs: %s", dir, strerror(errno));
        return -1;
    }
    uint64_t need = rank_inodes * (uint64_t)(ranks > 1 ? ranks : 1); /* both far below 2^32 */
    if (fs.f_files && need > (uint64_t)fs.f_favail) {
        snprintf(why, why_len, "not enough inodes in %s: the run makes %llu files and directories, %llu can be made",
                 dir, (unsigned long long)need, (unsigned long long)fs.f_favail);
        return -1;
    }
    return 0;
}

int cbk_check_block_sizes(uint64_t file_bytes, uint64_t block_bytes, bool direct,
                          char *why, size_t why_len)
{
    char f[32], b[32];
    cbk_format_size(file_bytes, f, sizeof f);
    cbk_format_size(block_bytes, b, sizeof b);
    if (block_bytes > file_bytes) {
        snprintf(why, why_len, "block size %s is larger than file size %s", b, f);
        return -1;
    }
    if (file_bytes % block_bytes) {
        snprintf(why, why_len, "file size %s is not a multiple of block size %s", f, b);
        return -1;
    }
    if (direct && block_bytes % 512) {
        snprintf(why, why_len, "block size %s is not a multiple of 512 bytes, as O_DIRECT requires", b);
        return -1;
    }
    if (block_bytes > ((uint64_t)1 << 31)) {
        snprintf(why, why_len, "block size %s is larger than 2 GiB, the most one system call moves", b);
        return -1;
    }
    return 0;
}

int cbk_write_blocks(int fd, struct cbk_pattern *pat, uint64_t file_bytes, uint64_t logical_base)
{
    size_t block = pat->block_bytes;
    for (uint64_t off = 0; off < file_bytes; off += block) {
        cbk_pattern_fill(pat, pat->pool, logical_base + off);
        size_t done = 0;
        while (done < block) {
            ssize_t n = pwrite(fd, pat->pool + done, block - done, (off_t)(off + done));
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                return -errno;
            }
            if (n == 0)
                return -EIO;
            done += (size_t)n;
        }
    }
    return 0;
}

int cbk_read_blocks(int fd, unsigned char *buf, size_t block_bytes, uint64_t file_bytes,
                    const struct cbk_pattern *pat, uint64_t logical_base, uint64_t *bad_offset)
{
    for (uint64_t off = 0; off < file_bytes; off += block_bytes) {
        size_t done = 0;
        while (done < block_bytes) {
            ssize_t n = pread(fd, buf + done, block_bytes - done, (off_t)(off + done));
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                return -errno;
            }
            if (n == 0)
                return -ENODATA; /* the file is shorter than it should be */
            done += (size_t)n;
        }
        if (pat && !cbk_pattern_check(pat, buf, block_bytes, logical_base + off, bad_offset)) {
            *bad_offset -= logical_base;
            return 1;
        }
    }
    return 0;
}

int cbk_test_corrupt(const char *path, uint64_t file_bytes)
{
    const char *v = getenv("CBK_TEST_CORRUPT_OFFSET");
    uint64_t off;
    if (!v || cbk_parse_size(v, &off) || off >= file_bytes)
        return 0;
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return -errno;
    unsigned char byte;
    int rc = 0;
    if (pread(fd, &byte, 1, (off_t)off) != 1)
        rc = -EIO;
    byte ^= 0xff;
    if (!rc && (pwrite(fd, &byte, 1, (off_t)off) != 1 || fsync(fd)))
        rc = -EIO;
    close(fd);
    return rc;
}

int cbk_io_status(int err)
{
    /* ENOSPC and EDQUOT too: validate's space check (cbk_check_target_dir) passed,
     * so the disk filled while the run wrote (another writer, a quota) */
    (void)err;
    return CBK_EXIT_FAILED;
}

void cbk_report_buffered_write(struct cbk_ctx *c, const struct cbk_phase *p, double written_end_s,
                               double synced_end_s, double sync_s)
{
    struct cbk_phase cached = *p, synced = *p;
    cached.mode = cbk_write_mode_names[CBK_WRITE_BUFFERED];
    cached.end_s = written_end_s;
    cbk_phase_field(&cached, CBK_REAL("sync_seconds", sync_s));
    cbk_phase_warn(&cached, "buffered write: timed until the data reached the page cache, not the device");
    cbk_report(c, &cached);
    synced.mode = "buffered+sync";
    synced.end_s = synced_end_s;
    cbk_phase_field(&synced, CBK_REAL("sync_seconds", sync_s));
    cbk_report(c, &synced);
}

void cbk_phase_buffer_pages(struct cbk_phase *p, bool huge_asked, size_t huge_bytes)
{
    cbk_phase_field(p, CBK_BOOL("huge_pages", huge_asked));
    cbk_phase_field(p, CBK_U64("buffer_huge_bytes", huge_bytes));
}
