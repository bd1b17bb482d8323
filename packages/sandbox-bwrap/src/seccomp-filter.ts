import { argumentValues, errnoValues, type FilteredSyscall, syscallTables } from './seccomp-syscalls.js';

/** A CPU architecture the filter can be built for, in Node's spelling (`process.arch`). */
export type SeccompArchitecture = 'x64' | 'arm64';

/** What the seccomp filter allows beyond its fixed deny list. */
export interface SeccompPolicy {
  /** The architecture of the kernel and of the sandboxed binaries. */
  readonly architecture: SeccompArchitecture;
  /**
   * `'none'`: `socket()` and `socketpair()` work only for `AF_UNIX`; any other domain fails with
   * `EAFNOSUPPORT`, the answer of a kernel built without that family, so programs that probe for
   * IPv6 or similar fall back instead of reporting a permission problem. `'shared'`: no socket rule.
   */
  readonly network: 'none' | 'shared';
  /**
   * `'deny'`: no new processes. `fork`, `vfork` (x86_64 only; arm64 has neither), `clone` without
   * `CLONE_THREAD` and `execveat` fail with `EPERM`; threads keep working (`clone3` fails with
   * `ENOSYS` under every policy and glibc falls back to `clone`). `execve` stays allowed, see
   * {@link buildSeccompFilter}.
   */
  readonly subprocesses: 'allow' | 'deny';
}

/**
 * The filter architecture for a Node architecture name, or `undefined` where no filter exists.
 *
 * @param arch a `process.arch` value; defaults to the running process's.
 */
export function seccompArchitecture(arch: string = process.arch): SeccompArchitecture | undefined {
  return arch === 'x64' || arch === 'arm64' ? arch : undefined;
}

/**
 * Builds a classic-BPF seccomp program for `policy`: the `struct sock_filter` array, little-endian,
 * as `bwrap --seccomp FD` reads it from FD up to end of file.
 *
 * The program checks `seccomp_data.arch` first and kills the process on any other ABI (i386 through
 * `int 0x80` on x86_64, aarch32 on arm64); on x86_64 it denies the whole x32 ABI. Then everything
 * is allowed except, with `EPERM`: debugging and cross-process access (`ptrace`,
 * `process_vm_readv/writev`, `pidfd_getfd`, `kcmp`, `process_madvise`), `io_uring_*`, `bpf`, the
 * kernel keyring, every mount call (`mount`, `umount2`, `pivot_root` and the mount API: `open_tree`,
 * `open_tree_attr`, `move_mount`, `fsopen`, `fsconfig`, `fsmount`, `fspick`, `mount_setattr`,
 * `statmount`, `listmount`) and `chroot`, `unshare`, `setns`, `perf_event_open`, kexec, kernel
 * modules, `userfaultfd`, swap, `reboot`, file handles, the kernel log (`syslog`),
 * `personality()` other than the default or a query, the terminal-injecting
 * ioctls `TIOCSTI` and `TIOCLINUX`, and `clone()` with a namespace flag. `clone3()` fails with
 * `ENOSYS`, because its flags are in memory a filter cannot read; glibc then falls back to `clone()`.
 * {@link SeccompPolicy} adds the socket and process rules.
 *
 * What it does not do: deny `execve`. bubblewrap installs the filter and then execs the sandboxed
 * command, and that exec looks like any later one (bwrap 0.8 sets `PWD` even with `--clearenv`, so
 * not even the environment pointer tells them apart). With `subprocesses: 'deny'` no new process
 * can be created, but a program that makes raw system calls can still replace itself with another
 * binary, which then runs under the same filter and in the same sandbox.
 *
 * @example
 * ```ts
 * const architecture = seccompArchitecture();
 * if (architecture) {
 *   const filter = buildSeccompFilter({ architecture, network: 'none', subprocesses: 'deny' });
 *   // write `filter` to a file or pipe and pass it as `bwrap --seccomp 3 …` with that fd as stdio[3]
 * }
 * ```
 */
export function buildSeccompFilter(policy: SeccompPolicy): Buffer {
  const table = syscallTables[policy.architecture];
  const program: Instruction[] = [
    loadWord(archOffset),
    jumpIf('equals', table.auditArch, 1, 0),
    returnAction(killProcess),
    loadWord(syscallNumberOffset),
  ];
  if (table.x32SyscallBit !== undefined) {
    program.push(jumpIf('hasAnyBit', table.x32SyscallBit, 0, 1), returnAction(denyWith('EPERM')));
  }
  const seen = new Set<number>();
  for (const rule of filterRules(policy)) {
    const syscallNumber = table.numbers[rule.syscall];
    if (syscallNumber === undefined) continue;
    if (seen.has(syscallNumber)) throw new Error(`Two seccomp rules for ${rule.syscall}.`);
    seen.add(syscallNumber);
    program.push(...ruleBlock(rule, syscallNumber));
  }
  program.push(returnAction(allow));
  if (program.length > maxInstructions) {
    throw new Error(
      `The seccomp program has ${program.length} instructions, over the kernel's ${maxInstructions}.`,
    );
  }
  return encodeProgram(program);
}

/**
 * One line for diagnostics, such as
 * `"x86_64: 46 system calls denied, plus TIOCSTI/TIOCLINUX, personality changes and namespace clones; sockets AF_UNIX only; no new processes"`.
 */
export function formatSeccompPolicy(policy: SeccompPolicy): string {
  const table = syscallTables[policy.architecture];
  let denied = 0;
  for (const rule of filterRules(policy)) {
    if (rule.kind === 'always' && rule.action !== allow && table.numbers[rule.syscall] !== undefined) {
      denied += 1;
    }
  }
  const network = policy.network === 'none' ? 'sockets AF_UNIX only' : 'shared network';
  const processes = policy.subprocesses === 'deny' ? 'no new processes' : 'subprocesses allowed';
  return `${table.kernelName}: ${denied} system calls denied, plus TIOCSTI/TIOCLINUX, personality changes and namespace clones; ${network}; ${processes}`;
}

interface Instruction {
  readonly code: number;
  readonly jumpIfTrue: number;
  readonly jumpIfFalse: number;
  readonly constant: number;
}

interface ArgumentCheck {
  readonly test: 'equals' | 'hasAnyBit';
  readonly value: number;
  readonly action: number;
}

/** A rule for one system call: the same action every time, or one chosen by an argument. */
type SyscallRule =
  | { readonly kind: 'always'; readonly syscall: FilteredSyscall; readonly action: number }
  | {
      readonly kind: 'byArgument';
      readonly syscall: FilteredSyscall;
      /** Index into `seccomp_data.args`; only its low 32 bits are compared. */
      readonly argument: number;
      /** Tried in order; the first that matches decides. */
      readonly checks: readonly ArgumentCheck[];
      readonly otherwise: number;
    };

// Classic BPF opcodes (linux/bpf_common.h) and seccomp return values (linux/seccomp.h).
const loadAbsoluteWord = 0x20; // BPF_LD | BPF_W | BPF_ABS
const jumpEqualConstant = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const jumpAnyBitConstant = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const returnConstant = 0x06; // BPF_RET | BPF_K
const killProcess = 0x80000000; // SECCOMP_RET_KILL_PROCESS
const returnErrno = 0x00050000; // SECCOMP_RET_ERRNO, errno in the low 16 bits
const allow = 0x7fff0000; // SECCOMP_RET_ALLOW
const maxInstructions = 4096; // BPF_MAXINSNS
const maxJump = 255; // jt and jf are 8-bit

// struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
const syscallNumberOffset = 0;
const archOffset = 4;
const argumentsOffset = 16;

const alwaysDenied: readonly FilteredSyscall[] = [
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  // Reaching into another process short of ptrace: taking its descriptors, comparing its kernel
  // objects, advising on its memory. Nothing in the sandbox needs them, and with a non-root parent
  // bubblewrap's pid 1 has the program's own uid, so only this filter keeps them from reaching it.
  'pidfd_getfd',
  'kcmp',
  'process_madvise',
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'bpf',
  'keyctl',
  'add_key',
  'request_key',
  'mount',
  'umount2',
  'pivot_root',
  'move_mount',
  'open_tree',
  'fsopen',
  'fsmount',
  'fsconfig',
  'fspick',
  'mount_setattr',
  'open_tree_attr',
  // Only describe mounts, but nothing in the sandbox needs them and they are young kernel code (6.8).
  'statmount',
  'listmount',
  'chroot',
  'unshare',
  'setns',
  'perf_event_open',
  'kexec_load',
  'kexec_file_load',
  'init_module',
  'finit_module',
  'delete_module',
  'userfaultfd',
  'swapon',
  'swapoff',
  'reboot',
  'open_by_handle_at',
  'name_to_handle_at',
  // The kernel log: the machine's boot messages and devices, readable where kernel.dmesg_restrict is 0.
  'syslog',
];

function denyWith(name: keyof typeof errnoValues): number {
  return returnErrno | errnoValues[name];
}

function filterRules(policy: SeccompPolicy): SyscallRule[] {
  const rules: SyscallRule[] = alwaysDenied.map((syscall) => ({
    kind: 'always',
    syscall,
    action: denyWith('EPERM'),
  }));
  rules.push({
    kind: 'byArgument',
    syscall: 'ioctl',
    argument: 1,
    checks: [
      { test: 'equals', value: argumentValues.TIOCSTI, action: denyWith('EPERM') },
      { test: 'equals', value: argumentValues.TIOCLINUX, action: denyWith('EPERM') },
    ],
    otherwise: allow,
  });
  // Other personalities (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, …) weaken the memory protections of
  // whatever the process runs next; nothing in the sandbox needs them.
  rules.push({
    kind: 'byArgument',
    syscall: 'personality',
    argument: 0,
    checks: [
      { test: 'equals', value: argumentValues.PER_LINUX, action: allow },
      { test: 'equals', value: argumentValues.PERSONALITY_QUERY, action: allow },
    ],
    otherwise: denyWith('EPERM'),
  });
  // clone() can create namespaces just like unshare(); clone3() could too, unseen.
  const cloneChecks: ArgumentCheck[] = [
    { test: 'hasAnyBit', value: argumentValues.CLONE_NAMESPACES, action: denyWith('EPERM') },
  ];
  if (policy.subprocesses === 'deny') {
    cloneChecks.push({ test: 'hasAnyBit', value: argumentValues.CLONE_THREAD, action: allow });
  }
  rules.push({
    kind: 'byArgument',
    syscall: 'clone',
    argument: 0,
    checks: cloneChecks,
    otherwise: policy.subprocesses === 'deny' ? denyWith('EPERM') : allow,
  });
  rules.push({ kind: 'always', syscall: 'clone3', action: denyWith('ENOSYS') });
  if (policy.network === 'none') {
    for (const syscall of ['socket', 'socketpair'] as const) {
      rules.push({
        kind: 'byArgument',
        syscall,
        argument: 0,
        checks: [{ test: 'equals', value: argumentValues.AF_UNIX, action: allow }],
        otherwise: denyWith('EAFNOSUPPORT'),
      });
    }
  }
  if (policy.subprocesses === 'deny') {
    for (const syscall of ['fork', 'vfork', 'execveat'] as const) {
      rules.push({ kind: 'always', syscall, action: denyWith('EPERM') });
    }
  }
  return rules;
}

// Each block starts by comparing the syscall number loaded at the top and ends in returns on every
// path, so blocks never jump past their own end and the accumulator is intact for the next block.
// That keeps every jump short however many rules there are.
function ruleBlock(rule: SyscallRule, syscallNumber: number): Instruction[] {
  const body = rule.kind === 'always' ? [returnAction(rule.action)] : argumentBody(rule);
  return [jumpIf('equals', syscallNumber, 0, body.length), ...body];
}

// load arg; check 1 … check n; return otherwise; return action 1 … return action n.
// Check i sits n instructions before its return, so every true branch jumps exactly n.
function argumentBody(rule: Extract<SyscallRule, { kind: 'byArgument' }>): Instruction[] {
  const body = [loadWord(argumentsOffset + 8 * rule.argument)]; // low half: both ABIs are little-endian
  for (const check of rule.checks) body.push(jumpIf(check.test, check.value, rule.checks.length, 0));
  body.push(returnAction(rule.otherwise));
  for (const check of rule.checks) body.push(returnAction(check.action));
  return body;
}

function loadWord(offset: number): Instruction {
  return { code: loadAbsoluteWord, jumpIfTrue: 0, jumpIfFalse: 0, constant: offset };
}

function jumpIf(
  test: ArgumentCheck['test'],
  value: number,
  jumpIfTrue: number,
  jumpIfFalse: number,
): Instruction {
  if (jumpIfTrue > maxJump || jumpIfFalse > maxJump) {
    throw new RangeError(`A seccomp jump of ${Math.max(jumpIfTrue, jumpIfFalse)} is over ${maxJump}.`);
  }
  const code = test === 'equals' ? jumpEqualConstant : jumpAnyBitConstant;
  return { code, jumpIfTrue, jumpIfFalse, constant: value };
}

function returnAction(action: number): Instruction {
  return { code: returnConstant, jumpIfTrue: 0, jumpIfFalse: 0, constant: action };
}

function encodeProgram(program: readonly Instruction[]): Buffer {
  const bytes = Buffer.alloc(program.length * 8);
  for (const [index, instruction] of program.entries()) {
    const at = index * 8;
    bytes.writeUInt16LE(instruction.code, at);
    bytes.writeUInt8(instruction.jumpIfTrue, at + 2);
    bytes.writeUInt8(instruction.jumpIfFalse, at + 3);
    bytes.writeUInt32LE(instruction.constant >>> 0, at + 4);
  }
  return bytes;
}
