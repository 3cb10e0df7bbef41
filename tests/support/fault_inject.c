// An LD_PRELOAD shim that makes chosen system calls fail, for the fault
// tests (a full disk, EIO at fsync, a failing rename) without root or a real
// broken device. Configured by the environment of the process it is loaded in:
//   NESTFAST_FAULT_CALL   pwrite | write | fsync | rename   (pwrite covers pwrite64 and
//                         write covers both write and pwrite; fsync covers fdatasync)
//   NESTFAST_FAULT_ERRNO  ENOSPC | EIO | EDQUOT | SIGKILL | SIGSTOP   (default ENOSPC;
//                         SIGKILL: the process is killed at that call instead, as by a
//                         node failure; SIGSTOP: it stops itself there, after logging, and
//                         the call goes through once it is continued, so a test can hold
//                         a job at a known point of its work)
//   NESTFAST_FAULT_AFTER  N: the first N matching calls succeed, later ones fail (default 0)
//   NESTFAST_FAULT_TIMES  K: only K calls fail, then they succeed again (default: all)
//   NESTFAST_FAULT_PATH   count only calls on files whose path contains this text
//   NESTFAST_FAULT_RANK   only in the MPI process with this PMI_RANK
// Every injected failure is counted in NESTFAST_FAULT_LOG (a file), when set,
// so a test can tell that the fault really happened; NESTFAST_FAULT_TRACE (a
// file) counts every matching call, failed or not (with NESTFAST_FAULT_AFTER
// large, a clean run's count).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

enum { kNone = 0, kPwrite = 1, kWrite = 2, kFsync = 3, kRename = 4 };

static int configured = 0;
static int call_kind = kNone;
static int fault_errno = ENOSPC;
static long after = 0;
static long times = -1;
static const char* path_part = NULL;
static long seen = 0;
static long injected = 0;

static void configure(void) {
  if (configured) return;
  configured = 1;
  const char* rank = getenv("NESTFAST_FAULT_RANK");
  const char* mine = getenv("PMI_RANK");
  if (rank != NULL && (mine == NULL || strcmp(rank, mine) != 0)) return;
  const char* call = getenv("NESTFAST_FAULT_CALL");
  if (call == NULL) return;
  if (strcmp(call, "pwrite") == 0) call_kind = kPwrite;
  else if (strcmp(call, "write") == 0) call_kind = kWrite;
  else if (strcmp(call, "fsync") == 0) call_kind = kFsync;
  else if (strcmp(call, "rename") == 0) call_kind = kRename;
  const char* code = getenv("NESTFAST_FAULT_ERRNO");
  if (code != NULL && strcmp(code, "EIO") == 0) fault_errno = EIO;
  if (code != NULL && strcmp(code, "EDQUOT") == 0) fault_errno = EDQUOT;
  if (code != NULL && strcmp(code, "SIGKILL") == 0) fault_errno = -SIGKILL;
  if (code != NULL && strcmp(code, "SIGSTOP") == 0) fault_errno = -SIGSTOP;
  if (getenv("NESTFAST_FAULT_AFTER") != NULL) after = atol(getenv("NESTFAST_FAULT_AFTER"));
  if (getenv("NESTFAST_FAULT_TIMES") != NULL) times = atol(getenv("NESTFAST_FAULT_TIMES"));
  path_part = getenv("NESTFAST_FAULT_PATH");
}

static int path_matches_fd(int fd) {
  if (path_part == NULL) return 1;
  char link[64];
  char target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t length = readlink(link, target, sizeof target - 1);
  if (length < 0) return 0;
  target[length] = '\0';
  return strstr(target, path_part) != NULL;
}

static void log_line(const char* variable) {
  const char* log = getenv(variable);
  if (log == NULL) return;
  const int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  typedef ssize_t (*raw_write_fn)(int, const void*, size_t);
  const raw_write_fn real_write = (raw_write_fn)dlsym(RTLD_NEXT, "write");
  if (real_write(fd, "x\n", 2) < 0) {
    // nothing to do: the log is only a hint for the test
  }
  close(fd);
}

// Whether this call (of `kind`, on `fd` or on `path`) fails; counts it.
static int should_fail(int kind, int fd, const char* path) {
  configure();
  if (call_kind == kNone) return 0;
  if (kind != call_kind && !(call_kind == kWrite && kind == kPwrite)) return 0;
  if (fd >= 0 && !path_matches_fd(fd)) return 0;
  if (path != NULL && path_part != NULL && strstr(path, path_part) == NULL) return 0;
  ++seen;
  log_line("NESTFAST_FAULT_TRACE");
  if (seen <= after) return 0;
  if (times >= 0 && injected >= times) return 0;
  ++injected;
  log_line("NESTFAST_FAULT_LOG");
  if (fault_errno == -SIGKILL) raise(SIGKILL);
  if (fault_errno == -SIGSTOP) {
    raise(SIGSTOP);
    return 0;
  }
  errno = fault_errno;
  return 1;
}

typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off_t);
typedef ssize_t (*write_fn)(int, const void*, size_t);
typedef int (*sync_fn)(int);
typedef int (*rename_fn)(const char*, const char*);

ssize_t pwrite(int fd, const void* buffer, size_t count, off_t offset) {
  static pwrite_fn real = NULL;
  if (real == NULL) real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
  if (should_fail(kPwrite, fd, NULL)) return -1;
  return real(fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void* buffer, size_t count, off_t offset) {
  static pwrite_fn real = NULL;
  if (real == NULL) real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite64");
  if (should_fail(kPwrite, fd, NULL)) return -1;
  return real(fd, buffer, count, offset);
}

ssize_t write(int fd, const void* buffer, size_t count) {
  static write_fn real = NULL;
  if (real == NULL) real = (write_fn)dlsym(RTLD_NEXT, "write");
  // stdout and stderr always work: the test must see what the program says.
  if (fd > 2 && should_fail(kWrite, fd, NULL)) return -1;
  return real(fd, buffer, count);
}

int fsync(int fd) {
  static sync_fn real = NULL;
  if (real == NULL) real = (sync_fn)dlsym(RTLD_NEXT, "fsync");
  if (should_fail(kFsync, fd, NULL)) return -1;
  return real(fd);
}

int fdatasync(int fd) {
  static sync_fn real = NULL;
  if (real == NULL) real = (sync_fn)dlsym(RTLD_NEXT, "fdatasync");
  if (should_fail(kFsync, fd, NULL)) return -1;
  return real(fd);
}

int rename(const char* from, const char* to) {
  static rename_fn real = NULL;
  if (real == NULL) real = (rename_fn)dlsym(RTLD_NEXT, "rename");
  if (should_fail(kRename, -1, from)) return -1;
  return real(from, to);
}
