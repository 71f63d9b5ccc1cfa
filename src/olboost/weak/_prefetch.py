"""A cache-line prefetch for compiled kernels (LLVM's ``llvm.prefetch``), which Numba does not
expose. A split attempt reads, for each feature in turn, one Gaussian record per class, each in
another observer block: scattered loads that missed the cache on most classes (the hottest
instruction of a mediamill Ada.OLMR run, ``perf``); prefetching the next feature's records
while the current one is evaluated hides that latency. A prefetch changes no value."""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic


@intrinsic
def prefetch_record(typingctx, array, i, j):
    """Ask the CPU to bring ``array[i, j, 0]`` and ``array[i, j, -1]`` (a record in a C-ordered
    3-d array) into the cache for reading; no effect on any value, never a fault."""
    if not (isinstance(array, types.Array) and array.ndim == 3):
        return None
    if not (isinstance(i, types.Integer) and isinstance(j, types.Integer)):
        return None
    signature = types.void(array, i, j)

    def codegen(context, builder, sig, args):
        array_type = sig.args[0]
        view = context.make_array(array_type)(context, builder, args[0])
        shape = cgutils.unpack_tuple(builder, view.shape)
        strides = cgutils.unpack_tuple(builder, view.strides)
        row = context.cast(builder, args[1], sig.args[1], types.intp)
        column = context.cast(builder, args[2], sig.args[2], types.intp)
        last = builder.sub(shape[2], context.get_constant(types.intp, 1))
        i32 = ir.IntType(32)
        for field in (context.get_constant(types.intp, 0), last):
            pointer = cgutils.get_item_pointer2(
                context, builder, data=view.data, shape=shape, strides=strides,
                layout=array_type.layout, inds=[row, column, field], wraparound=False,
            )  # fmt: skip
            function = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [pointer.type, i32, i32, i32]),
                "llvm.prefetch.p0",
            )  # fmt: skip
            # read (0), keep in every cache level (3), data cache (1)
            builder.call(function, [pointer, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return signature, codegen
