# The guest side of Ghost's Python API, run once in each host's interpreter before any program.
# It speaks the contract of the JavaScript prelude (packages/code-mode/src/host/guest-prelude.mjs):
# take_calls() gives the JSON text of queued calls, deliver_results(json) settles them and says how
# many still wait, outcome() gives the completion JSON once the program has ended. Values cross
# as JSON text only; the host never hands the program a JavaScript object.
#
# Python offers no encapsulation (any function's __globals__ leads here), so what this file does
# to keep a program from the host's JavaScript (the import blocker below) is defence in depth: the
# boundary is the sandbox and Node's permission model around the host process
# (docs/decisions/2026-12-07-python-engine.md).

import ast
import asyncio
import builtins
import collections
import heapq
import json
import keyword
import math
import sys
import types
from asyncio import base_events, events

MAX_VALUE_DEPTH = 256
RESULT_NAME = "__ghost_value__"
PROGRAM_FILE = "<program>"


class ToolError(Exception):
    """A tool call failed: its message is the tool's."""


class ProgramExit(BaseException):
    """exit() / finish(): a BaseException, so `except Exception` in the program does not stop it."""


class NotJsonError(TypeError):
    """A value that cannot cross as JSON; the program sees it as the TypeError it is."""


NotJsonError.__name__ = "TypeError"


def _describe(value):
    name = type(value).__name__
    return f"an {name}" if name[:1] in "aeiouAEIOU" else f"a {name}"


def _check_json(value, what, path="the top level", depth=0, holders=()):
    """Raises a clear TypeError when value is not JSON, naming where; returns nothing."""
    if value is None or isinstance(value, (bool, str)):
        return
    if isinstance(value, int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotJsonError(f"{what} is not JSON: {value!r} at {path}; JSON has no NaN or Infinity.")
        return
    if isinstance(value, (list, tuple, dict)):
        if any(holder is value for holder in holders):
            raise NotJsonError(f"{what} is not JSON: it refers to itself at {path}.")
        if depth >= MAX_VALUE_DEPTH:
            raise NotJsonError(
                f"{what} nests deeper than {MAX_VALUE_DEPTH} levels of lists and dicts, more than code mode carries. Pass a flatter value."
            )
        inner = holders + (value,)
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise NotJsonError(
                        f"{what} is not JSON: {_describe(key)} key {key!r} at {path}; JSON keys are strings."
                    )
                _check_json(item, what, f"{path}[{key!r}]" if depth else f"[{key!r}]", depth + 1, inner)
        else:
            for index, item in enumerate(value):
                _check_json(item, what, f"{path}[{index}]" if depth else f"[{index}]", depth + 1, inner)
        return
    raise NotJsonError(
        f"{what} is not JSON: {_describe(value)} at {path}; use dict, list, str, int, float, bool or None."
    )


def to_json(value, what):
    _check_json(value, what)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def format_text(value):
    if isinstance(value, str):
        return value
    try:
        return to_json(value, "It")
    except NotJsonError:
        return repr(value)


def format_error(error):
    """`Name: message (line n)`, the line being the program's own."""
    line = None
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == PROGRAM_FILE:
            line = trace.tb_lineno
        trace = trace.tb_next
    if isinstance(error, SyntaxError) and error.filename == PROGRAM_FILE:
        line = error.lineno
        message = error.msg
    else:
        message = str(error)
    name = type(error).__name__
    where = f" (line {line})" if line else ""
    return f"{name}: {message}{where}" if message else f"{name}{where}"


class _NoSelector:
    """The host's loop never waits on files or sockets: the host waits, between turns."""

    def select(self, timeout=None):
        return []


class HostLoop(base_events.BaseEventLoop):
    """An asyncio loop the host turns itself, one batch of ready callbacks per turn."""

    def __init__(self):
        super().__init__()
        self._selector = _NoSelector()
        # A tool error nobody awaited is the program's business, not output.
        self.set_exception_handler(lambda loop, context: None)

    def _process_events(self, event_list):
        pass

    def _write_to_self(self):
        pass

    def run_ready(self):
        """Runs the callbacks that are ready or due, as one turn (the microtask pump)."""
        events._set_running_loop(self)
        try:
            for _ in range(64):
                if not self._ready and not self._due():
                    break
                self._run_once()
        finally:
            events._set_running_loop(None)

    def _due(self):
        return bool(self._scheduled) and self._scheduled[0]._when <= self.time()

    def has_ready(self):
        return bool(self._ready) or self._due()

    def next_timer_ms(self):
        """Milliseconds until the earliest timer (asyncio.sleep), or -1 when none is set."""
        while self._scheduled and self._scheduled[0]._cancelled:
            heapq.heappop(self._scheduled)
        if not self._scheduled:
            return -1
        return max(0, (self._scheduled[0]._when - self.time()) * 1000)


def _python_name(identifier):
    # tools.import_ for a tool named `import`, as PEP 8 suggests for keywords (src/python-identifier.ts).
    name = identifier.replace("$", "_")
    return f"{name}_" if keyword.iskeyword(name) or keyword.issoftkeyword(name) else name


class Program:
    """One program's state: its loop, its globals, its tool calls, how it ended."""

    def __init__(self, tools_json):
        self.catalog = json.loads(tools_json)
        self.by_name = {}
        for entry in self.catalog:
            for name in (entry["name"], entry["identifier"], "tools." + entry["identifier"]):
                self.by_name.setdefault(name, entry)
            self.by_name.setdefault(_python_name(entry["identifier"]), entry)
        self.loop = HostLoop()
        self.next_call_id = 1
        self.waiting = {}
        self.queued = []
        self.finished = None
        self.task = None
        self.result = None
        self.globals = self._make_globals()

    # -- the program's tool calls

    def call_tool(self, name, args=None):
        future = self.loop.create_future()
        if self.finished is not None:
            future.set_exception(ToolError("The program has finished; it makes no more tool calls."))
            return future
        entry = self.by_name.get(str(name))
        if entry is None:
            available = ", ".join(_python_name(each["identifier"]) for each in self.catalog) or "none"
            future.set_exception(ToolError(f"Unknown tool '{name}'. Available tools: {available}."))
            return future
        try:
            what = f"The arguments of tools.{_python_name(entry['identifier'])}"
            text = to_json({} if args is None else args, what)
        except NotJsonError as error:
            future.set_exception(error)
            return future
        call_id = str(self.next_call_id)
        self.next_call_id += 1
        self.queued.append(f'{{"callId":"{call_id}","name":{json.dumps(entry["name"])},"input":{text}}}')
        self.waiting[call_id] = future
        return future

    def take_calls(self):
        # Output written before a call reaches the host before the call.
        _flush_output()
        if not self.queued:
            return None
        calls = "[" + ",".join(self.queued) + "]"
        self.queued = []
        return calls

    def deliver_results(self, results_json):
        for result in json.loads(results_json):
            future = self.waiting.pop(result.get("callId"), None)
            if future is None or future.done():
                continue
            if result.get("ok"):
                future.set_result(result.get("value"))
            else:
                future.set_exception(ToolError(str(result.get("error"))))
        return len(self.waiting)

    # -- the program's globals

    def _make_globals(self):
        program = self
        tools = _make_tools(program)

        def text(value):
            print(format_text(value))

        def finish(value=None):
            if program.finished is None:
                _flush_output()
                program.finished = (value,)
            raise ProgramExit()

        all_tools = []
        for entry in self.catalog:
            copy = {
                "name": _python_name(entry["identifier"]),
                "toolName": entry["name"],
                "description": entry["description"],
                "inputSchema": entry["inputSchema"],
            }
            if "outputSchema" in entry:
                copy["outputSchema"] = entry["outputSchema"]
            all_tools.append(copy)
        program_builtins = dict(vars(builtins))
        program_builtins.update(exit=finish, quit=finish)
        return {
            "__builtins__": program_builtins,
            "__name__": "__main__",
            "tools": tools,
            "ALL_TOOLS": all_tools,
            "text": text,
            "exit": finish,
            "finish": finish,
            "ToolError": ToolError,
            "asyncio": asyncio,
        }

    # -- running

    def start(self, source):
        """Compiles the program and starts it as a task; a syntax error ends it at once."""
        try:
            code = _compile_program(source)
        except SyntaxError as error:
            self.result = json.dumps({"status": "error", "error": format_error(error)})
            return
        self.task = self.loop.create_task(self._main(code))

    async def _main(self, code):
        started = eval(code, self.globals)
        if started is not None and asyncio.iscoroutine(started):
            await started
        return self.globals.get(RESULT_NAME)

    def has_ended(self):
        return self.result is not None or self.finished is not None or (self.task is not None and self.task.done())

    def outcome(self):
        """The completion JSON once the program has ended, else None."""
        if self.result is not None:
            return self.result
        if self.finished is not None:
            self.result = _completion(self.finished[0])
        elif self.task is not None and self.task.done():
            error = self.task.exception()
            if error is None:
                self.result = _completion(self.task.result())
            elif isinstance(error, ProgramExit):
                self.result = _completion(None if self.finished is None else self.finished[0])
            else:
                _flush_output()
                self.result = json.dumps({"status": "error", "error": format_error(error)})
        return self.result


def _completion(value):
    _flush_output()
    if value is None:
        return '{"status":"completed"}'
    try:
        text = to_json(value, "The program's value")
    except NotJsonError as error:
        return json.dumps({"status": "error", "error": format_error(error)})
    return '{"status":"completed","value":' + text + "}"


def _compile_program(source):
    """Top-level await allowed; the last expression's value is the program's value."""
    tree = ast.parse(source, PROGRAM_FILE, "exec")
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        assign = ast.Assign(targets=[ast.Name(id=RESULT_NAME, ctx=ast.Store())], value=last.value)
        tree.body[-1] = ast.copy_location(assign, last)
        ast.fix_missing_locations(tree)
    return compile(tree, PROGRAM_FILE, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


def _make_tools(program):
    methods = {}
    for entry in program.catalog:
        methods[_python_name(entry["identifier"])] = _tool_method(program, entry)

    class Tools:
        """The tools: `await tools.<name>(**input)`, `tools.call(name, args)`, `tools.parallel(...)`."""

        __slots__ = ()

        def __getattr__(self, name):
            method = methods.get(name)
            if method is not None:
                return method
            if name.startswith("__"):
                raise AttributeError(name)
            return lambda *args, **kwargs: program.call_tool(name)

        def __dir__(self):
            return sorted(methods) + ["call", "parallel"]

        def call(self, name, args=None):
            return program.call_tool(name, args)

        def parallel(self, *calls):
            if len(calls) == 1 and isinstance(calls[0], (list, tuple)):
                calls = tuple(calls[0])
            return asyncio.gather(*(call() if callable(call) else call for call in calls))

    return Tools()


def _tool_method(program, entry):
    name = entry["name"]

    def call(*args, **kwargs):
        if args:
            if len(args) != 1 or kwargs or not isinstance(args[0], dict):
                future = program.loop.create_future()
                future.set_exception(
                    TypeError(
                        f"tools.{_python_name(entry['identifier'])} takes keyword arguments (or one dict), not {len(args)} positional."
                    )
                )
                return future
            return program.call_tool(name, args[0])
        return program.call_tool(name, kwargs)

    call.__name__ = _python_name(entry["identifier"])
    call.__doc__ = entry.get("description") or None
    return call


def _flush_output():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


# -- containment: what a program may not import (defence in depth, see the top)

BLOCKED_MODULES = frozenset(
    {
        "js",
        "pyodide_js",
        "pyodide",
        "_pyodide",
        "_pyodide_core",
        "ctypes",
        "_ctypes",
        "subprocess",
        "_posixsubprocess",
        "multiprocessing",
        "_multiprocessing",
        "socket",
        "_socket",
        "select",
        "selectors",
        "ssl",
        "_ssl",
        "micropip",
        "pyodide_http",
        "_ghost_prelude",
    }
)


def _is_blocked(name):
    return name.split(".", 1)[0] in BLOCKED_MODULES


class BlockedImporter:
    """First on sys.meta_path: refuses the modules that lead to the host or the network."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if _is_blocked(name):
            raise ImportError(f"Module '{name}' is not available to programs in code mode.", name=name)
        return None


def contain():
    """Blocks the modules above, forgets the loaded ones, and removes process calls from os."""
    import os

    for name in list(sys.modules):
        if _is_blocked(name):
            del sys.modules[name]
    sys.meta_path[:] = [BlockedImporter] + [
        finder for finder in sys.meta_path if type(finder).__module__.split(".")[0] not in BLOCKED_MODULES
    ]
    for name in ("system", "popen", "fork", "forkpty", "kill", "killpg", "execv", "execve", "spawnv", "posix_spawn"):
        for module in (os, sys.modules.get("posix")):
            if module is not None and hasattr(module, name):
                delattr(module, name)


def warm_up():
    """Runs what the first program would otherwise pay for: the compiler, a task, JSON both ways."""
    program = Program('[{"name":"warm","identifier":"warm","description":"","inputSchema":{}}]')
    program.start("x = await tools.warm(n=1)\n[x, {'ok': True}]")
    for _ in range(4):
        program.loop.run_ready()
        calls = program.take_calls()
        if calls:
            program.deliver_results('[{"callId":"1","ok":true,"value":1}]')
    program.outcome()
    program.loop.close()
