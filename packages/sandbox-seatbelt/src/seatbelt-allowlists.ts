/**
 * What a sandboxed Node process is given beyond its spec, each entry with the reason it is there
 * (written into the profile beside it). Each list is as short as Node needs: to start (dyld, the
 * system libraries, the facts libSystem, libuv and V8 read at start) and to run a program (time
 * zone, random bytes); with `network: 'shared'`, to reach the network by name. Anything not listed
 * is denied by the profile's `(deny default)`, so a missing entry fails closed, never open.
 */

/** A path filter: one file or directory (`literal`), or a directory and everything in it (`subpath`). */
export interface PathAllowance {
  readonly path: string;
  readonly match: 'literal' | 'subpath';
  readonly reason: string;
}

/** A sysctl filter: one name, or every name that starts with `name`. */
export interface SysctlAllowance {
  readonly name: string;
  readonly match: 'name' | 'prefix';
  readonly reason: string;
}

/** Code the dynamic loader maps into every process: read and mapped executable. */
export const systemLibraries: readonly PathAllowance[] = [
  { path: '/usr/lib', match: 'subpath', reason: 'dyld, libSystem and libc++, which every program loads' },
  {
    path: '/System/Library/Frameworks',
    match: 'subpath',
    reason: 'frameworks the command links, such as CoreFoundation',
  },
  {
    path: '/System/Library/PrivateFrameworks',
    match: 'subpath',
    reason: 'frameworks those frameworks load',
  },
  { path: '/System/Library/dyld', match: 'subpath', reason: 'the dyld shared cache on macOS 11 and 12' },
  {
    path: '/System/Volumes/Preboot/Cryptexes/OS',
    match: 'subpath',
    reason: 'the dyld shared cache from macOS 13 on',
  },
  { path: '/System/Cryptexes/OS', match: 'subpath', reason: 'the same cache, where it is mounted' },
];

/** System files read, never written or executed. */
export const systemFiles: readonly PathAllowance[] = [
  {
    path: '/System/Library',
    match: 'subpath',
    reason: "the sealed system volume's files: SystemVersion.plist, framework resources",
  },
  {
    path: '/private/etc/localtime',
    match: 'literal',
    reason: 'which time zone is local (a link into the time zone data)',
  },
  { path: '/private/var/db/timezone', match: 'subpath', reason: 'the time zone data, for dates' },
  { path: '/dev/random', match: 'literal', reason: 'random bytes, for libraries that open the device' },
  { path: '/dev/urandom', match: 'literal', reason: 'the same' },
];

/**
 * The one device a process may write: standard streams the parent leaves closed point at it, and
 * a stream is read, written and set up with `ioctl(2)`.
 */
export const nullDevice = '/dev/null';

/**
 * macOS's links from `/` into `/private`. A process given a path the short way (`/tmp/x`) follows
 * one, and following a link means reading it; what it points to is granted (or not) by the rest
 * of the profile.
 */
export const macStandardLinks: readonly string[] = ['/etc', '/tmp', '/var'];

/** Facts about the machine and the OS that libSystem, libuv and V8 read; nothing about the user. */
export const sysctlReads: readonly SysctlAllowance[] = [
  {
    name: 'hw.activecpu',
    match: 'name',
    reason: "CPUs online: libuv's and V8's thread pools are sized by it",
  },
  { name: 'hw.ncpu', match: 'name', reason: 'CPUs configured (sysconf)' },
  { name: 'hw.logicalcpu_max', match: 'name', reason: 'libdispatch sizes itself by it at start' },
  { name: 'hw.physicalcpu_max', match: 'name', reason: 'the same' },
  { name: 'hw.nperflevels', match: 'name', reason: 'performance levels on Apple silicon (libdispatch)' },
  { name: 'hw.perflevel', match: 'prefix', reason: "each performance level's CPUs (libdispatch)" },
  { name: 'hw.memsize', match: 'name', reason: "total memory: Node sizes V8's heap by it at start" },
  { name: 'hw.pagesize', match: 'name', reason: 'the page size, for the memory allocators' },
  { name: 'hw.pagesize_compat', match: 'name', reason: 'the same, as libSystem asks for it' },
  { name: 'hw.cachelinesize_compat', match: 'name', reason: 'the cache line size (libSystem)' },
  { name: 'hw.tbfrequency_compat', match: 'name', reason: 'the timebase frequency, for clocks' },
  {
    name: 'hw.cpufrequency_compat',
    match: 'name',
    reason: "read at start with the facts above (Chromium's sandbox allows it too)",
  },
  { name: 'hw.busfrequency_compat', match: 'name', reason: 'the same' },
  { name: 'hw.byteorder', match: 'name', reason: 'the byte order' },
  { name: 'hw.cputype', match: 'name', reason: "the machine's CPU type (dyld, libSystem)" },
  { name: 'sysctl.proc_cputype', match: 'name', reason: "this process's CPU type: native or Rosetta" },
  { name: 'hw.machine', match: 'name', reason: "the architecture name, for uname(3): 'arm64', 'x86_64'" },
  {
    name: 'hw.vectorunit',
    match: 'name',
    reason: "whether the CPU has vector units (libSystem's string routines)",
  },
  { name: 'hw.optional.', match: 'prefix', reason: 'CPU features: V8 and OpenSSL pick their code by them' },
  { name: 'kern.ostype', match: 'name', reason: "the OS's name, for uname(3)" },
  { name: 'kern.osrelease', match: 'name', reason: "the kernel's release, for uname(3) and version checks" },
  { name: 'kern.version', match: 'name', reason: "the kernel's version string, for uname(3)" },
  { name: 'kern.osversion', match: 'name', reason: "the OS's build number" },
  { name: 'kern.osproductversion', match: 'name', reason: "the OS's version, for availability checks" },
  { name: 'kern.osvariant_status', match: 'name', reason: "libSystem's build-variant checks at start" },
  { name: 'kern.secure_kernel', match: 'name', reason: 'the same' },
  { name: 'kern.usrstack64', match: 'name', reason: "where the main thread's stack is (V8's stack limit)" },
];

/** Files read to resolve host names with `network: 'shared'`. */
export const nameResolutionFiles: readonly PathAllowance[] = [
  { path: '/private/etc/hosts', match: 'literal', reason: 'names the hosts file defines' },
  {
    path: '/private/etc/resolv.conf',
    match: 'literal',
    reason: "a link to the DNS settings, read by Node's resolver",
  },
  { path: '/private/var/run/resolv.conf', match: 'literal', reason: 'the DNS settings it points to' },
  { path: '/private/etc/services', match: 'literal', reason: 'service names, for a lookup with a service' },
  { path: '/private/etc/protocols', match: 'literal', reason: 'protocol names' },
];

/**
 * Where host names are resolved with `network: 'shared'`: getaddrinfo(3) asks mDNSResponder over
 * this socket.
 */
export const mdnsResponderSocket = '/private/var/run/mDNSResponder';

/** The one Mach service a process may look up, with `network: 'shared'` only. */
export const dnsConfigurationService = 'com.apple.SystemConfiguration.DNSConfiguration';
