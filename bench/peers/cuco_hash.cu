// Chapter 4's peer (Moazeni 2013, issue 45): NVIDIA cuCollections' cuco::static_map on the
// batches our hash table runs. This driver is ours; cuCollections is the user's own
// checkout (peers/cuCollections, git-ignored), included from its include/ folder and
// never copied here. Build and run: bench/device/cuco_build.sh, bench/moazeni2013_ch4_peers.py.
//
//   cuco_hash IN.bin LOAD_FACTOR REPEATS   -> one CSV line on stdout
//
// IN.bin: batch_file.cuh's. A key is its float's bits (keys in (0, 1) are positive, so no
// key is one of the two sentinels), its value its index.
//
// Each repeat builds a map of capacity (n_preload + inserts) / LOAD_FACTOR, inserts the
// preload (untimed), then times the batch between CUDA events as three asynchronous bulk
// calls: find of the searches, insert of the inserts, erase of the deletes (cuco's host API
// runs one kind of operation a call; our table runs the mixed batch in one launch), behind
// a delay kernel so that the events time the device and not the host's launches. The batch is
// schedule-free (hashtable_workloads.mix_batch: searches and deletes touch preloaded keys,
// disjoint; inserts are fresh), so the three calls give the same answer in any order;
// the driver checks it: every search found, the map's size preload + inserts - deletes,
// no deleted key left. Output: repeats, the mean and minimum seconds, the check (1 = ok).
#include <cuco/static_map.cuh>

#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "batch_file.cuh"

using Key = std::uint32_t;
using Value = std::uint32_t;
constexpr Key kEmpty = 0xFFFFFFFFu, kErased = 0xFFFFFFFEu;
constexpr Value kNoValue = 0xFFFFFFFFu;

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: cuco_hash IN.bin LOAD_FACTOR REPEATS\n");
        return 2;
    }
    PeerBatch b;
    if (!read_batch(argv[1], "cuco_hash", b)) return 2;
    const std::uint64_t n_pre = b.preload.size(), n_batch = b.ops.size();
    const double load = std::atof(argv[2]);
    const int repeats = std::atoi(argv[3]);
    std::vector<Key> by_op[3];
    for (std::uint64_t i = 0; i < n_batch; ++i) by_op[b.ops[i]].push_back(b.keys[i]);
    thrust::device_vector<Key> d_pre(b.preload), d_search(by_op[0]), d_insert(by_op[1]),
        d_delete(by_op[2]);
    thrust::device_vector<Value> found(std::max<std::size_t>(by_op[0].size(), 1));
    thrust::device_vector<bool> left(std::max<std::size_t>(by_op[2].size(), 1));
    const auto capacity = static_cast<std::size_t>((n_pre + by_op[1].size()) / load) + 1;
    auto pairs = [](const thrust::device_vector<Key>& k) {
        const Key* p = thrust::raw_pointer_cast(k.data());
        return thrust::make_transform_iterator(
            thrust::counting_iterator<Value>(0),
            [p] __device__(Value i) { return cuco::pair<Key, Value>{p[i], i}; });
    };
    cudaEvent_t start, end;
    cudaEventCreate(&start);
    cudaEventCreate(&end);
    double sum = 0, best = 1e30;
    int ok = 1;
    for (int r = 0; r < repeats; ++r) {
        auto map = cuco::static_map{cuco::extent<std::size_t>{capacity}, cuco::empty_key<Key>{kEmpty},
                                    cuco::empty_value<Value>{kNoValue}, cuco::erased_key<Key>{kErased}};
        map.insert(pairs(d_pre), pairs(d_pre) + d_pre.size());
        cudaDeviceSynchronize();
        delay<<<1, 1>>>(200000);  // the device waits while the host enqueues the calls
        cudaEventRecord(start);
        if (!d_search.empty()) map.find_async(d_search.begin(), d_search.end(), found.begin());
        if (!d_insert.empty()) map.insert_async(pairs(d_insert), pairs(d_insert) + d_insert.size());
        if (!d_delete.empty()) map.erase_async(d_delete.begin(), d_delete.end());
        cudaEventRecord(end);
        cudaEventSynchronize(end);
        float ms = 0;
        cudaEventElapsedTime(&ms, start, end);
        sum += ms / 1e3;
        best = std::min(best, ms / 1e3);
        const auto missed = thrust::count(found.begin(), found.begin() + d_search.size(), kNoValue);
        if (!d_delete.empty()) map.contains(d_delete.begin(), d_delete.end(), left.begin());
        const auto kept = thrust::count(left.begin(), left.begin() + d_delete.size(), true);
        const auto size = map.size();
        if (missed != 0 || kept != 0 || size != n_pre + d_insert.size() - d_delete.size()) ok = 0;
    }
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        std::fprintf(stderr, "cuco_hash: CUDA error %s\n", cudaGetErrorString(err));
        return 1;
    }
    std::printf("%d,%.9g,%.9g,%d\n", repeats, sum / repeats, best, ok);
    return 0;
}
