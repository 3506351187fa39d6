// Force-included before cuCollections (bench/device/cuco_build.sh): the cuCollections
// snapshot of October 2024 calls thrust::identity, which CCCL 3 (CUDA 13) removed. Where
// CCCL is 3 or later this defines it again, as CCCL 2 had it (a template whose default
// argument forwards any value); under CCCL 2 it adds nothing.
#pragma once
#include <cuda/std/utility>
#include <cuda/std/version>
#include <thrust/functional.h>

#if defined(CCCL_MAJOR_VERSION) && CCCL_MAJOR_VERSION >= 3
namespace thrust {
template <class T = void>
struct identity {
    template <class U>
    __host__ __device__ constexpr U&& operator()(U&& x) const noexcept {
        return ::cuda::std::forward<U>(x);
    }
};
}  // namespace thrust
#endif
