// The attributes of a batch of copies (cudaMemcpyBatchAsync, cuMemcpyBatchAsync), vetted and
// walked once for both stubs: the runtime's cudaMemcpyAttributes and the driver's
// CUmemcpyAttributes have the same members and the same values, so the rules are written over
// either.
//
// A batch of `count` copies comes with `num_attrs` attributes and `attrs_idxs`, the first copy
// each attribute applies to: the first starts at copy 0, each starts after the one before, and
// none past the last copy. An attribute names a source access order CUDA knows (stream, during
// the call, any: 1, 2, 3 in both APIs) and no flag beyond `known_flags`.
//
// A batch of 3D copies (cuMemcpy3DBatchAsync, cudaMemcpy3DBatchAsync) carries its attributes in
// each operation, whose operands are pointers or arrays (1 and 2 in both APIs) named alike in
// CUDA_MEMCPY3D_BATCH_OP and cudaMemcpy3DBatchOp: valid_3d_operation vets one.
#pragma once

#include <cstddef>

namespace gvirtus::batch {

// The source access orders both APIs define (cudaMemcpySrcAccessOrder, CUmemcpySrcAccessOrder).
inline constexpr int kOrderStream = 1;
inline constexpr int kOrderDuringApiCall = 2;
inline constexpr int kOrderAny = 3;

// The operand types both APIs define (CUmemcpy3DOperandType, cudaMemcpy3DOperandType).
inline constexpr int kOperandPointer = 1;
inline constexpr int kOperandArray = 2;

template <typename Attributes>
bool valid_attributes(size_t count, const Attributes* attrs, const size_t* attrs_idxs,
                      size_t num_attrs, unsigned known_flags) {
  if (count == 0 || attrs == nullptr || attrs_idxs == nullptr || num_attrs == 0 ||
      num_attrs > count) {
    return false;
  }
  if (attrs_idxs[0] != 0 || attrs_idxs[num_attrs - 1] >= count) return false;
  for (size_t k = 0; k < num_attrs; ++k) {
    if (k > 0 && attrs_idxs[k] <= attrs_idxs[k - 1]) return false;
    const int order = static_cast<int>(attrs[k].srcAccessOrder);
    if (order != kOrderStream && order != kOrderDuringApiCall && order != kOrderAny) return false;
    if ((attrs[k].flags & ~known_flags) != 0) return false;
  }
  return true;
}

// Calls copy(i, attributes of copy i) for each copy in order, for attributes valid_attributes
// accepted; stops at the first call that returns false and returns its index, or `count`.
template <typename Attributes, typename Copy>
size_t for_each_copy(size_t count, const Attributes* attrs, const size_t* attrs_idxs,
                     size_t num_attrs, Copy&& copy) {
  size_t attr = 0;
  for (size_t i = 0; i < count; ++i) {
    while (attr + 1 < num_attrs && attrs_idxs[attr + 1] <= i) ++attr;
    if (!copy(i, attrs[attr])) return i;
  }
  return count;
}

// Whether copies with these attributes promise that their sources were read when the call returns.
template <typename Attributes>
bool read_during_call(const Attributes& attributes) {
  return static_cast<int>(attributes.srcAccessOrder) == kOrderDuringApiCall;
}

// Whether a 3D batch's operation is one CUDA takes: a non-zero extent; each operand an array, or
// a pointer whose row length and layer height are 0 (packed) or at least the extent's; a source
// access order CUDA knows and no flag beyond `known_flags`.
template <typename Operation>
bool valid_3d_operation(const Operation& op, unsigned known_flags) {
  const auto valid_operand = [&](const auto& o) {
    const int type = static_cast<int>(o.type);
    if (type == kOperandArray) return o.op.array.array != nullptr;
    if (type != kOperandPointer || !o.op.ptr.ptr) return false;
    return (o.op.ptr.rowLength == 0 || o.op.ptr.rowLength >= op.extent.width) &&
           (o.op.ptr.layerHeight == 0 || o.op.ptr.layerHeight >= op.extent.height);
  };
  constexpr size_t kItself = 0;  // the operation's attributes start at it: a batch of one
  return op.extent.width != 0 && op.extent.height != 0 && op.extent.depth != 0 &&
         valid_operand(op.src) && valid_operand(op.dst) &&
         valid_attributes(1, &op, &kItself, 1, known_flags);
}

}  // namespace gvirtus::batch
