/**
 * The C source of the native probe: the few attempts Node cannot make because they are raw system
 * calls (`ptrace`, `TIOCSTI`, raw sockets, `pidfd_getfd`), a fork loop, an exact list of open descriptors and a
 * single-threaded sleeper. It is kept as a string, not a `.c` file, so the published package needs
 * no copy step: the suite writes it to a temp dir and compiles it at start (`cc -static` on Linux,
 * since a static binary needs no shared library inside the sandbox). Off Linux only the POSIX
 * modes (`fds`, `fork-bomb`, `plant`, `reach`, `sleep`) are built; the cases using the others are Linux-only.
 *
 * Usage: `probe <mode> [arguments...]`; each mode prints one JSON object on stdout. Errors are
 * reported as errno numbers (0 means the call succeeded), which the suite names.
 */
export const nativeProbeSource = String.raw`
/*
 * The modes fds, fork-bomb, plant, reach and sleep are POSIX and build everywhere (macOS too); the others
 * attempt what only Linux has (seccomp's targets, pid namespaces, user namespaces) and build only
 * there. GHOST_PROBE_POSIX_ONLY builds the POSIX subset on Linux, as macOS gets it.
 */
#if defined(__linux__) && !defined(GHOST_PROBE_POSIX_ONLY)
#define GHOST_PROBE_LINUX 1
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef GHOST_PROBE_LINUX
#include <sched.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#endif

#ifdef GHOST_PROBE_LINUX
/* 0 when the call succeeded, else its errno. */
static int outcome(long result) { return result < 0 ? errno : 0; }


/* Older C libraries lack these numbers; they are the same on x86_64 and arm64. */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* Opens a path and closes it again: 0 when it opened, else the errno. */
static int open_outcome(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

/*
 * Tries to reach pid 1 of its pid namespace, the backend's init: its memory and environment
 * through /proc, and its descriptors through pidfd_getfd. Without a pid namespace pid 1 is the
 * machine's init; when the probe is pid 1 itself there is nothing else to reach, and it says so.
 */
static int reach_pid_one(void) {
  int mem = open_outcome("/proc/1/mem");
  int environment = open_outcome("/proc/1/environ");
  long pidfd = syscall(SYS_pidfd_open, 1, 0);
  printf("{\"pid\":%d,\"mem\":%d,\"environ\":%d,\"pidfdOpen\":%d,\"getfd\":[", (int)getpid(), mem,
         environment, outcome(pidfd));
  for (int fd = 0; fd < 3; fd++) {
    int error = pidfd < 0 ? -1 : outcome(syscall(SYS_pidfd_getfd, (int)pidfd, fd, 0));
    printf("%s%d", fd == 0 ? "" : ",", error);
  }
  printf("]}\n");
  return 0;
}

#endif /* GHOST_PROBE_LINUX */

/* Every open descriptor, found with fcntl so that no /proc is needed and none is opened to look. */
static int list_descriptors(void) {
  printf("{\"fds\":[");
  const char *separator = "";
  for (int fd = 0; fd < 4096; fd++) {
    if (fcntl(fd, F_GETFD) >= 0) {
      printf("%s%d", separator, fd);
      separator = ",";
    }
  }
  printf("]}\n");
  return 0;
}

#ifdef GHOST_PROBE_LINUX
/* A child of our own is the one target ptrace allows without a filter, so it proves the filter. */
static int trace(int count, char **targets) {
  pid_t child = fork();
  if (child == 0) {
    sleep(30);
    _exit(0);
  }
  printf("{\"attempts\":[");
  for (int index = -2; index < count; index++) {
    pid_t pid = index == -2 ? child : index == -1 ? getppid() : (pid_t)atoi(targets[index]);
    const char *target = index == -2 ? "own child" : index == -1 ? "parent" : targets[index];
    /* SEIZE does not stop the target, so a successful attempt does not freeze it. */
    int error = outcome(ptrace(PTRACE_SEIZE, pid, 0, 0));
    if (error == 0) ptrace(PTRACE_DETACH, pid, 0, 0);
    printf("%s{\"target\":\"%s\",\"pid\":%d,\"errno\":%d}", index == -2 ? "" : ",", target, (int)pid, error);
  }
  printf("]}\n");
  if (child > 0) kill(child, SIGKILL);
  return 0;
}

/*
 * TIOCSTI only works on one's controlling terminal, so a session leader opens a fresh pty as its
 * controlling terminal and pushes a byte into it; without a filter that succeeds.
 */
static int inject_keystroke(void) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0) {
    int error = errno;
    char byte = '#';
    printf("{\"terminal\":\"stdin\",\"ptyErrno\":%d,\"errno\":%d}\n", error, outcome(ioctl(0, TIOCSTI, &byte)));
    return 0;
  }
  const char *name = ptsname(master);
  pid_t child = fork();
  if (child == 0) {
    setsid();
    int terminal = open(name, O_RDWR);
    char byte = '#';
    _exit(terminal < 0 ? 255 : outcome(ioctl(terminal, TIOCSTI, &byte)));
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("{\"terminal\":\"pty\",\"errno\":%d}\n", WIFEXITED(status) ? WEXITSTATUS(status) : 254);
  return 0;
}

static int open_sockets(void) {
  struct { const char *name; int domain, type, protocol; } kinds[] = {
    {"raw ICMP", AF_INET, SOCK_RAW, IPPROTO_ICMP},
    {"raw ICMPv6", AF_INET6, SOCK_RAW, IPPROTO_ICMPV6},
    {"packet", AF_PACKET, SOCK_RAW, 0},
    {"TCP", AF_INET, SOCK_STREAM, 0},
    {"UDP", AF_INET6, SOCK_DGRAM, 0},
    {"unix", AF_UNIX, SOCK_STREAM, 0},
  };
  printf("{\"sockets\":{");
  for (size_t index = 0; index < sizeof kinds / sizeof kinds[0]; index++) {
    int fd = socket(kinds[index].domain, kinds[index].type, kinds[index].protocol);
    printf("%s\"%s\":%d", index == 0 ? "" : ",", kinds[index].name, outcome(fd));
    if (fd >= 0) close(fd);
  }
  printf("}}\n");
  return 0;
}

/* Tries to make a user namespace, with unshare and with clone; each errno, 0 if one was made. */
static int make_user_namespace(void) {
  int unshared = outcome(unshare(CLONE_NEWUSER));
  long child = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
  if (child == 0) _exit(0);
  int cloned = outcome(child);
  if (child > 0) waitpid((pid_t)child, NULL, 0);
  printf("{\"unshare\":%d,\"clone\":%d}\n", unshared, cloned);
  return 0;
}
#endif /* GHOST_PROBE_LINUX */

/*
 * What a host that escaped its engine could do with native code: copy itself into its working
 * directory (the workspace) as a set-user-id and set-group-id program, and open the workspace to
 * every user, so that someone outside could run the copy as the host's identity. Each step's
 * errno (0: it worked), and the identity the copy would give.
 */
static int plant_setid_copy(const char *self, const char *name) {
  int copied = 0, setid = -1;
  int source = open(self, O_RDONLY);
  int target = source < 0 ? -1 : open(name, O_WRONLY | O_CREAT | O_EXCL, 0700);
  if (source < 0 || target < 0) {
    copied = errno;
  } else {
    char buffer[65536];
    ssize_t count;
    while ((count = read(source, buffer, sizeof buffer)) > 0) {
      if (write(target, buffer, (size_t)count) != count) {
        copied = errno != 0 ? errno : EIO;
        break;
      }
    }
    if (count < 0) copied = errno;
    setid = fchmod(target, 06755) < 0 ? errno : 0;
  }
  if (source >= 0) close(source);
  if (target >= 0) close(target);
  int opened = chmod(".", 0777) < 0 ? errno : 0;
  printf("{\"uid\":%d,\"gid\":%d,\"copy\":%d,\"setid\":%d,\"openWorkspace\":%d}\n", (int)geteuid(),
         (int)getegid(), copied, setid, opened);
  return 0;
}

/*
 * Tries to reach another session: each path (a leading + creates it instead of reading it), then,
 * after --, each pid: a signal, and on Linux its memory, environment and descriptors through
 * /proc. Each errno, 0 where it got through.
 */
static int reach(int count, char **targets) {
  printf("{\"uid\":%d,\"paths\":{", (int)geteuid());
  int index = 0;
  for (; index < count && strcmp(targets[index], "--") != 0; index++) {
    const char *path = targets[index];
    int create = path[0] == '+';
    int fd = create ? open(path + 1, O_WRONLY | O_CREAT | O_EXCL, 0600) : open(path, O_RDONLY);
    int error = fd < 0 ? errno : 0;
    if (fd >= 0) close(fd);
    printf("%s\"%s\":%d", index == 0 ? "" : ",", path, error);
  }
  printf("},\"pids\":{");
  for (int first = ++index; index < count; index++) {
    int pid = atoi(targets[index]);
    printf("%s\"%d\":{\"signal\":%d", index == first ? "" : ",", pid, kill((pid_t)pid, 0) < 0 ? errno : 0);
#ifdef GHOST_PROBE_LINUX
    const char *entries[] = {"mem", "environ", "fd"};
    for (int entry = 0; entry < 3; entry++) {
      char path[64];
      snprintf(path, sizeof path, "/proc/%d/%s", pid, entries[entry]);
      printf(",\"%s\":%d", entries[entry], open_outcome(path));
    }
#endif
    printf("}");
  }
  printf("}}\n");
  return 0;
}

/*
 * Every process forks as fast as it can for the given seconds, children included; then the first
 * reports and exits while the rest sleep, so the suite can count them, and exit on their own later.
 */
static int fork_bomb(int seconds) {
  pid_t first = getpid();
  time_t end = time(NULL) + seconds;
  long forks = 0, failures = 0;
  while (time(NULL) < end) {
    pid_t child = fork();
    if (child == 0) continue;
    if (child > 0) {
      forks++;
    } else {
      failures++;
      usleep(1000);
    }
  }
  if (getpid() != first) {
    sleep(30);
    _exit(0);
  }
  printf("{\"forks\":%ld,\"failures\":%ld}\n", forks, failures);
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "fds") == 0) return list_descriptors();
#ifdef GHOST_PROBE_LINUX
  if (strcmp(mode, "ptrace") == 0) return trace(argc - 2, argv + 2);
  if (strcmp(mode, "tiocsti") == 0) return inject_keystroke();
  if (strcmp(mode, "sockets") == 0) return open_sockets();
  if (strcmp(mode, "pid1") == 0) return reach_pid_one();
  if (strcmp(mode, "userns") == 0) return make_user_namespace();
#endif
  if (strcmp(mode, "fork-bomb") == 0) return fork_bomb(argc > 2 ? atoi(argv[2]) : 2);
  if (strcmp(mode, "plant") == 0 && argc > 2) return plant_setid_copy(argv[0], argv[2]);
  if (strcmp(mode, "reach") == 0) return reach(argc - 2, argv + 2);
  /* "sleep": a cheap child to count; its marker argument makes it findable from outside. */
  if (strcmp(mode, "sleep") == 0) {
    sleep(30);
    return 0;
  }
  fprintf(stderr, "unknown mode %s\n", mode);
  return 2;
}
`;
