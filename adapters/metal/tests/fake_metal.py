"""A NumPy stand-in for PyObjC's ``Metal`` and ``objc`` modules, for Linux CI.

It answers the exact selectors the adapter calls, and it is strict where a real GPU would be
unforgiving:

* a committed command buffer runs only when someone waits on it, so reading shared memory
  without waiting sees stale contents (the sentinels);
* each dispatch is checked against the MSL source the adapter compiled: the kernel function
  must exist, buffer and parameter-block indices must match its ``[[buffer(N)]]`` slots, the
  threadgroup shape must match the source's constants, the parameter block is decoded by
  the field names and types of the source's struct, and each kernel argument is the buffer
  bound at its slot (so swapped slots compute with the wrong buffers);
* a kernel never reads past a buffer it was given (a GPU would read garbage silently);
* each kernel is emulated threadgroup by threadgroup, recovering the flat index from the grid
  exactly as the MSL does, so a grid that does not cover the work leaves sentinels behind.

What it cannot show: that the MSL compiles, and how the real driver schedules work.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ClassVar

import numpy as np

from diffcheck.gpu_plan import declared_constants
from fake_metal_kernels import KERNELS

__version__ = "fake"
MTLResourceStorageModeShared = 0
MTLCommandBufferStatusCompleted = 4
MTLCommandBufferStatusError = 5

_SIGNATURE = re.compile(r"kernel void (\w+)\((.*?)\)\s*\{", re.S)
_SLOT = re.compile(r"(\w+)\s*[*&]?\s*(\w+) \[\[buffer\((\d+)\)\]\]")
_STRUCT = re.compile(r"struct (\w+) \{(.*?)\};", re.S)
_FIELD = re.compile(r"(uint|float) (\w+);")


class _Error:
    def __init__(self, text: str) -> None:
        self.text = text

    def localizedDescription(self) -> str:
        return self.text


class _Pointer:
    def __init__(self, data: bytearray) -> None:
        self.data = data

    def as_buffer(self, length: int) -> memoryview:
        return memoryview(self.data)[:length]


class Buffer:
    def __init__(self, data: bytearray) -> None:
        self.data = data

    def length(self) -> int:
        return len(self.data)

    def contents(self) -> _Pointer:
        return _Pointer(self.data)

    def floats(self) -> np.ndarray:
        return np.frombuffer(self.data, dtype=np.float32)


class Function:
    """One kernel function with what its source declares: slots, parameter fields, threads."""

    def __init__(self, name: str, source: str) -> None:
        self.name = name
        signature = next(m.group(2) for m in _SIGNATURE.finditer(source) if m.group(1) == name)
        declared = _SLOT.findall(signature)
        self.slots = {int(index): (kind, arg) for kind, arg, index in declared}
        structs = {m.group(1): _FIELD.findall(m.group(2)) for m in _STRUCT.finditer(source)}
        # The buffer slots in the order the signature names them: the emulator receives its
        # arguments in that order, so a source whose slot numbers disagree with the adapter's
        # binding order computes with the wrong buffers, as the GPU would.
        self.argument_slots = [int(index) for kind, _, index in declared if kind not in structs]
        (self.params_slot,) = [i for i, (kind, _) in self.slots.items() if kind in structs]
        fields = structs[self.slots[self.params_slot][0]]
        self.fields = [field for _, field in fields]
        self.format = "<" + "".join("f" if kind == "float" else "I" for kind, _ in fields)
        constants = declared_constants(source)
        x = constants.get("THREADS_X", constants.get("LANES", constants.get("THREADS")))
        y = constants.get("THREADS_Y", constants.get("ROWS", 1))
        self.threads = (x, y, 1)


class Library:
    def __init__(self, source: str) -> None:
        self.source = source

    def newFunctionWithName_(self, name: str) -> Function | None:
        return Function(name, self.source) if f"kernel void {name}(" in self.source else None


class Pipeline:
    def __init__(self, function: Function) -> None:
        self.function = function

    def maxTotalThreadsPerThreadgroup(self) -> int:
        return 1024


class _ComputeEncoder:
    def __init__(self, commands: list[Callable[[], None]]) -> None:
        self.commands = commands
        self.pipeline: Pipeline | None = None
        self.buffers: dict[int, Buffer] = {}
        self.params: dict[int, bytes] = {}

    def setComputePipelineState_(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    def setBuffer_offset_atIndex_(self, buffer: Buffer, offset: int, index: int) -> None:
        assert offset == 0
        self.buffers[index] = buffer

    def setBytes_length_atIndex_(self, data: bytes, length: int, index: int) -> None:
        self.params[index] = bytes(data[:length])

    def dispatchThreadgroups_threadsPerThreadgroup_(
        self, grid: tuple[int, int, int], threads: tuple[int, int, int]
    ) -> None:
        assert self.pipeline is not None
        function = self.pipeline.function
        assert tuple(threads) == function.threads, (function.name, threads, function.threads)
        assert set(self.params) == {function.params_slot}, (function.name, self.params)
        assert set(self.buffers) == set(function.slots) - {function.params_slot}
        data = self.params[function.params_slot]
        needed = struct.calcsize(function.format)
        assert len(data) >= needed, (
            f"{function.name}: a parameter block of {len(data)} bytes, but its struct needs {needed}"
        )
        values = struct.unpack_from(function.format, data)
        params = dict(zip(function.fields, values, strict=True))
        buffers = [self.buffers[i].floats() for i in function.argument_slots]
        kernel = KERNELS[function.name]
        flats = [
            (z * grid[1] + y) * grid[0] + x
            for z in range(grid[2])
            for y in range(grid[1])
            for x in range(grid[0])
        ]

        def run() -> None:
            for flat in flats:
                kernel(flat, params, *buffers)

        self.commands.append(run)
        self.buffers, self.params = {}, {}

    def endEncoding(self) -> None:
        pass


class _BlitEncoder:
    def __init__(self, commands: list[Callable[[], None]]) -> None:
        self.commands = commands

    def copyFromBuffer_sourceOffset_toBuffer_destinationOffset_size_(
        self, src: Buffer, src_offset: int, dst: Buffer, dst_offset: int, size: int
    ) -> None:
        def copy() -> None:
            dst.data[dst_offset : dst_offset + size] = src.data[src_offset : src_offset + size]

        self.commands.append(copy)

    def endEncoding(self) -> None:
        pass


class CommandBuffer:
    #: Set by a test: the next command buffers end with this driver error.
    fail_with: str | None = None

    def __init__(self) -> None:
        self.commands: list[Callable[[], None]] = []
        self._status = 0
        self._error: _Error | None = None
        self.failure = CommandBuffer.fail_with

    def computeCommandEncoder(self) -> _ComputeEncoder:
        assert self._status == 0, "encoding into a committed command buffer"
        return _ComputeEncoder(self.commands)

    def blitCommandEncoder(self) -> _BlitEncoder:
        assert self._status == 0, "encoding into a committed command buffer"
        return _BlitEncoder(self.commands)

    def commit(self) -> None:
        assert self._status == 0, "command buffer committed twice"
        self._status = 2

    def waitUntilCompleted(self) -> None:
        assert self._status != 0, "waiting on a command buffer that was never committed"
        if self._status == 2:
            if self.failure is None:
                for command in self.commands:
                    command()
                self._status = MTLCommandBufferStatusCompleted
            else:
                self._status = MTLCommandBufferStatusError
                self._error = _Error(self.failure)

    def status(self) -> int:
        return self._status

    def error(self) -> _Error | None:
        return self._error


class CommandQueue:
    def commandBuffer(self) -> CommandBuffer:
        return CommandBuffer()


class CompileOptions:
    fast_math = True

    @classmethod
    def alloc(cls) -> CompileOptions:
        return cls()

    def init(self) -> CompileOptions:
        return self

    def setFastMathEnabled_(self, enabled: bool) -> None:
        self.fast_math = enabled


MTLCompileOptions = CompileOptions


class Device:
    #: The options of every library compiled in this process (the fake is loaded per test).
    compiled: ClassVar[list[CompileOptions]] = []

    def name(self) -> str:
        return "Fake Metal GPU"

    def newCommandQueue(self) -> CommandQueue:
        return CommandQueue()

    def newBufferWithBytes_length_options_(self, data: bytes, length: int, options: int) -> Buffer:
        assert options == MTLResourceStorageModeShared
        return Buffer(bytearray(bytes(data)[:length]))

    def newLibraryWithSource_options_error_(
        self, source: str, options: CompileOptions, error: None
    ) -> tuple[Library, None]:
        Device.compiled.append(options)
        return Library(source), None

    def newComputePipelineStateWithFunction_error_(
        self, function: Function, error: None
    ) -> tuple[Pipeline, None]:
        return Pipeline(function), None


#: What MTLCreateSystemDefaultDevice returns; a test sets None for a machine without a GPU.
DEFAULT_DEVICE: Device | None = Device()


def MTLCreateSystemDefaultDevice() -> Device | None:
    return DEFAULT_DEVICE


@contextmanager
def autorelease_pool() -> Iterator[None]:
    yield
