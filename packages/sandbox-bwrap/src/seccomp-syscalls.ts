// Kernel ABI numbers the seccomp filter compares against. Syscall numbers come from the kernel's
// uapi headers (linux-libc-dev 6.1, and Linux 6.8 and 6.15 for statmount, listmount and
// open_tree_attr): `asm/unistd_64.h` for x86_64 and `asm-generic/unistd.h`, which arm64 uses
// unchanged; from 424 on both share one numbering. Only the system calls the filter names are listed.
import type { SeccompArchitecture } from './seccomp-filter.js';

/** The system calls the filter has a rule for. */
export type FilteredSyscall =
  | 'ptrace'
  | 'process_vm_readv'
  | 'process_vm_writev'
  | 'io_uring_setup'
  | 'io_uring_enter'
  | 'io_uring_register'
  | 'bpf'
  | 'keyctl'
  | 'add_key'
  | 'request_key'
  | 'mount'
  | 'umount2'
  | 'pivot_root'
  | 'move_mount'
  | 'open_tree'
  | 'fsopen'
  | 'fsmount'
  | 'fsconfig'
  | 'fspick'
  | 'mount_setattr'
  | 'open_tree_attr'
  | 'statmount'
  | 'listmount'
  | 'pidfd_getfd'
  | 'kcmp'
  | 'process_madvise'
  | 'syslog'
  | 'unshare'
  | 'setns'
  | 'perf_event_open'
  | 'kexec_load'
  | 'kexec_file_load'
  | 'init_module'
  | 'finit_module'
  | 'delete_module'
  | 'userfaultfd'
  | 'swapon'
  | 'swapoff'
  | 'reboot'
  | 'open_by_handle_at'
  | 'name_to_handle_at'
  | 'chroot'
  | 'personality'
  | 'ioctl'
  | 'socket'
  | 'socketpair'
  | 'fork'
  | 'vfork'
  | 'clone'
  | 'clone3'
  | 'execve'
  | 'execveat';

/** What the filter needs to know about one architecture. */
export interface SyscallTable {
  /** The name the kernel and `uname -m` use. */
  readonly kernelName: 'x86_64' | 'aarch64';
  /** `seccomp_data.arch` for native system calls (`AUDIT_ARCH_*` in `linux/audit.h`). */
  readonly auditArch: number;
  /**
   * x86_64 reaches the same entry point with the x32 ABI, marked by this bit in the syscall number
   * (`__X32_SYSCALL_BIT`); the filter denies every such call.
   */
  readonly x32SyscallBit: number | undefined;
  /** Syscall numbers; absent where the architecture has no such call (arm64 has no fork/vfork). */
  readonly numbers: Readonly<Partial<Record<FilteredSyscall, number>>>;
}

// AUDIT_ARCH_* = EM_* | __AUDIT_ARCH_64BIT (0x80000000) | __AUDIT_ARCH_LE (0x40000000).
const x64Table: SyscallTable = {
  kernelName: 'x86_64',
  auditArch: 0xc000003e, // EM_X86_64 = 62
  x32SyscallBit: 0x40000000,
  numbers: {
    ioctl: 16,
    socket: 41,
    socketpair: 53,
    clone: 56,
    fork: 57,
    vfork: 58,
    execve: 59,
    ptrace: 101,
    syslog: 103,
    personality: 135,
    pivot_root: 155,
    chroot: 161,
    mount: 165,
    umount2: 166,
    swapon: 167,
    swapoff: 168,
    reboot: 169,
    init_module: 175,
    delete_module: 176,
    kexec_load: 246,
    add_key: 248,
    request_key: 249,
    keyctl: 250,
    unshare: 272,
    perf_event_open: 298,
    name_to_handle_at: 303,
    open_by_handle_at: 304,
    setns: 308,
    process_vm_readv: 310,
    process_vm_writev: 311,
    kcmp: 312,
    finit_module: 313,
    kexec_file_load: 320,
    bpf: 321,
    execveat: 322,
    userfaultfd: 323,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    clone3: 435,
    pidfd_getfd: 438,
    process_madvise: 440,
    mount_setattr: 442,
    statmount: 457,
    listmount: 458,
    open_tree_attr: 467,
  },
};

const arm64Table: SyscallTable = {
  kernelName: 'aarch64',
  auditArch: 0xc00000b7, // EM_AARCH64 = 183
  x32SyscallBit: undefined,
  numbers: {
    ioctl: 29,
    umount2: 39,
    mount: 40,
    pivot_root: 41,
    chroot: 51,
    personality: 92,
    unshare: 97,
    kexec_load: 104,
    init_module: 105,
    delete_module: 106,
    syslog: 116,
    ptrace: 117,
    reboot: 142,
    socket: 198,
    socketpair: 199,
    add_key: 217,
    request_key: 218,
    keyctl: 219,
    clone: 220,
    execve: 221,
    swapon: 224,
    swapoff: 225,
    perf_event_open: 241,
    name_to_handle_at: 264,
    open_by_handle_at: 265,
    setns: 268,
    process_vm_readv: 270,
    process_vm_writev: 271,
    kcmp: 272,
    finit_module: 273,
    bpf: 280,
    execveat: 281,
    userfaultfd: 282,
    kexec_file_load: 294,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    clone3: 435,
    pidfd_getfd: 438,
    process_madvise: 440,
    mount_setattr: 442,
    statmount: 457,
    listmount: 458,
    open_tree_attr: 467,
  },
};

/** Syscall tables by Node's architecture name. */
export const syscallTables: Readonly<Record<SeccompArchitecture, SyscallTable>> = {
  x64: x64Table,
  arm64: arm64Table,
};

/** The errno values the filter returns; both architectures use the asm-generic numbering. */
export const errnoValues = {
  /** Operation not permitted. */
  EPERM: 1,
  /** Function not implemented: what a kernel without the call says, so callers fall back. */
  ENOSYS: 38,
  /** Address family not supported by protocol. */
  EAFNOSUPPORT: 97,
} as const;

/** Argument values the filter compares; the same on x86_64 and arm64. */
export const argumentValues = {
  /** `socket()` domain for Unix sockets (`AF_UNIX` in `sys/socket.h`). */
  AF_UNIX: 1,
  /** ioctl that pushes bytes into a terminal's input queue (`asm-generic/ioctls.h`). */
  TIOCSTI: 0x5412,
  /** ioctl for Linux virtual consoles, which can also inject input (`asm-generic/ioctls.h`). */
  TIOCLINUX: 0x541c,
  /** `clone()` flag that makes the child a thread of the caller (`linux/sched.h`). */
  CLONE_THREAD: 0x00010000,
  /**
   * Every `clone()` flag that creates a namespace: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER,
   * NEWPID, NEWNET (`linux/sched.h`). CLONE_NEWTIME (0x80) is left out: in `clone()` that bit is
   * part of the exit signal, and time namespaces come only from `unshare()` or `clone3()`.
   */
  CLONE_NAMESPACES: 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000,
  /** `personality()` value for the default Linux personality. */
  PER_LINUX: 0,
  /** `personality()` argument that only reads the current personality. */
  PERSONALITY_QUERY: 0xffffffff,
} as const;
