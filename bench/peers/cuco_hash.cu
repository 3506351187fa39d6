// Chapter 4's peer (Moazeni 2013): NVIDIA cuCollections on the batches our hash table runs.
// This driver is ours; cuCollections is the user's own checkout (peers/cuCollections,
// git-ignored), included from its include/ folder and never copied here. Build and run:
// bench/device/cuco_build.sh, bench/moazeni2013_ch4_peers.py.
//
//   cuco_hash IN.bin LOAD_FACTOR REPEATS STRUCTURE...   -> a CSV line a structure on stdout
//
// STRUCTURE: static_set (a set of 32-bit keys, as our table is: the fair one),
// static_map and dynamic_map (maps: each key with a 4-byte value, its index; dynamic_map
// is cuco's legacy growing map, the only cuco container of this snapshot that grows, here
// sized so that it need not). IN.bin: batch_file.cuh's. A key is its float's bits (keys in
// (0, 1) are positive and below 2^30, so no key is a sentinel).
//
// Each repeat builds the structure with room for (n_preload + inserts) / LOAD_FACTOR keys
// (the load factor every structure of the bench is sized at), inserts the preload
// (untimed), then times the whole batch between CUDA events, the batch already on the
// device as our table's is: a three-way partition of the mixed batch by operation on the
// device (cub::DevicePartition; cuco's host API runs one kind of operation a call), the
// read of the parts' two counts back to the host (the bulk calls need them), then the
// bulk calls: contains (set) or find (maps) of the searches, insert of the inserts, erase
// of the deletes. A delay kernel holds the device while the host enqueues the first of
// them, so that the events time the device and not the host's first launch; the host's
// wait for the counts, and dynamic_map's own synchronisations, are in the clock, since a
// caller pays them. No key appears twice in a batch, so the three calls give the
// expected answer in any order; the driver checks it: the searches found as many keys as
// expected, every inserted key present afterwards, no deleted key, the size as expected.
//
// Output a structure: name, the check (1 = ok), then every repeat's seconds.
#include <cuco/dynamic_map.cuh>
#include <cuco/static_map.cuh>
#include <cuco/static_set.cuh>

#include <cub/device/device_partition.cuh>
#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "batch_file.cuh"

using Key = std::uint32_t;
using Value = std::uint32_t;
constexpr Key kEmpty = 0xFFFFFFFFu, kErased = 0xFFFFFFFEu;
constexpr Value kNoValue = 0xFFFFFFFFu;
constexpr std::uint32_t kKeyBits = 0x3FFFFFFFu;  // an encoded word: op << 30 | key

struct IsOp {
    std::uint32_t op;
    __host__ __device__ bool operator()(std::uint32_t w) const { return (w >> 30) == op; }
};
struct KeyOf {
    __host__ __device__ Key operator()(std::uint32_t w) const { return w & kKeyBits; }
};
struct PairOf {
    const std::uint32_t* words;
    __host__ __device__ cuco::pair<Key, Value> operator()(Value i) const {
        return {words[i] & kKeyBits, i};
    }
};

#define CHECK_CUDA(call)                                                                   \
    do {                                                                                   \
        const cudaError_t e = (call);                                                      \
        if (e != cudaSuccess) {                                                            \
            std::fprintf(stderr, "cuco_hash: %s: %s\n", #call, cudaGetErrorString(e));     \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)

// The batch on the device and the partition's scratch, made once (outside the clock).
struct Batch {
    std::uint64_t n_pre = 0, n = 0, inserts = 0, found_expected = 0, size_after = 0;
    thrust::device_vector<Key> preload;
    thrust::device_vector<std::uint32_t> words;  // the batch encoded, op << 30 | key
    thrust::device_vector<int> counts;           // the partition's first two parts' sizes
    thrust::device_vector<std::uint8_t> temp;
    std::size_t temp_bytes = 0;
    int* h_counts = nullptr;  // pinned

    explicit Batch(const PeerBatch& b) {
        n_pre = b.preload.size();
        n = b.ops.size();
        std::vector<std::uint32_t> w(n);
        for (std::uint64_t i = 0; i < n; ++i) {
            w[i] = (std::uint32_t(b.ops[i]) << 30) | b.keys[i];
            inserts += b.ops[i] == 1;
            found_expected += b.ops[i] == 0 && b.expected[i];
        }
        size_after = b.size_after;
        preload = b.preload;
        words = w;
        counts.resize(2);
        std::uint32_t* none = nullptr;
        CHECK_CUDA(cub::DevicePartition::If(nullptr, temp_bytes, none, none, none, none,
                                            thrust::raw_pointer_cast(counts.data()),
                                            static_cast<int>(n), IsOp{0}, IsOp{1}));
        temp.resize(std::max<std::size_t>(temp_bytes, 1));
        CHECK_CUDA(cudaMallocHost(&h_counts, 2 * sizeof(int)));
    }
};

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: cuco_hash IN.bin LOAD_FACTOR REPEATS STRUCTURE...\n");
        return 2;
    }
    PeerBatch pb;
    if (!read_batch(argv[1], "cuco_hash", pb)) return 2;
    for (std::uint32_t k : pb.preload)
        if (k >> 30) {
            std::fprintf(stderr, "cuco_hash: key bits %08x need more than 30 bits\n", k);
            return 2;
        }
    const double load = std::atof(argv[2]);
    const int repeats = std::atoi(argv[3]);
    if (!(load > 0 && load < 1) || repeats < 1) {
        std::fprintf(stderr, "cuco_hash: LOAD_FACTOR must lie in (0, 1), REPEATS >= 1\n");
        return 2;
    }
    Batch b(pb);
    const std::uint64_t n = b.n;
    const auto capacity = static_cast<std::size_t>((b.n_pre + b.inserts) / load) + 1;
    // the partition's three parts, each its own buffer: searches, inserts, deletes
    thrust::device_vector<std::uint32_t> first(std::max<std::uint64_t>(n, 1)),
        second(std::max<std::uint64_t>(n, 1)), rest(std::max<std::uint64_t>(n, 1));
    thrust::device_vector<Value> found(std::max<std::uint64_t>(n, 1));
    thrust::device_vector<bool> hit(std::max<std::uint64_t>(n, 1));
    cudaEvent_t start, end;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&end));
    auto pre_pairs = thrust::make_transform_iterator(
        thrust::counting_iterator<Value>(0), PairOf{thrust::raw_pointer_cast(b.preload.data())});
    auto partition = [&] {
        CHECK_CUDA(cub::DevicePartition::If(thrust::raw_pointer_cast(b.temp.data()), b.temp_bytes,
                                            thrust::raw_pointer_cast(b.words.data()),
                                            thrust::raw_pointer_cast(first.data()),
                                            thrust::raw_pointer_cast(second.data()),
                                            thrust::raw_pointer_cast(rest.data()),
                                            thrust::raw_pointer_cast(b.counts.data()),
                                            static_cast<int>(n), IsOp{0}, IsOp{1}));
        CHECK_CUDA(cudaMemcpyAsync(b.h_counts, thrust::raw_pointer_cast(b.counts.data()),
                                   2 * sizeof(int), cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaStreamSynchronize(0));
        return std::array<std::uint64_t, 3>{std::uint64_t(b.h_counts[0]),
                                            std::uint64_t(b.h_counts[1]),
                                            n - b.h_counts[0] - b.h_counts[1]};
    };
    auto keys_of = [](thrust::device_vector<std::uint32_t>& v) {
        return thrust::make_transform_iterator(v.begin(), KeyOf{});
    };
    auto pairs_of = [](thrust::device_vector<std::uint32_t>& v) {
        return thrust::make_transform_iterator(thrust::counting_iterator<Value>(0),
                                               PairOf{thrust::raw_pointer_cast(v.data())});
    };

    for (int a = 4; a < argc; ++a) {
        const std::string name = argv[a];
        if (name != "static_set" && name != "static_map" && name != "dynamic_map") {
            std::fprintf(stderr, "cuco_hash: unknown structure %s\n", argv[a]);
            return 2;
        }
        std::vector<double> seconds;
        int ok = 1;
        for (int r = 0; r < repeats; ++r) {
            std::uint64_t found_count = 0, present_after = 0, inserted_found = 0, deleted_found = 0;
            std::array<std::uint64_t, 3> c{};
            float ms = 0;
            // each structure the same steps: build, preload (untimed), the timed batch, the check
            // answers(m): how many of the m searches the batch found; contains(keys, m): how
            // many of m keys the structure holds now (the check after the clock)
            auto timed = [&](auto& s, auto&& run_batch, auto&& answers, auto&& contains,
                             auto&& size) {
                CHECK_CUDA(cudaDeviceSynchronize());
                delay<<<1, 1>>>(200000);
                CHECK_CUDA(cudaEventRecord(start));
                c = partition();
                run_batch(c);
                CHECK_CUDA(cudaEventRecord(end));
                CHECK_CUDA(cudaEventSynchronize(end));
                CHECK_CUDA(cudaEventElapsedTime(&ms, start, end));
                found_count = c[0] ? answers(c[0]) : 0;
                if (c[1]) inserted_found = contains(keys_of(second), c[1]);
                if (c[2]) deleted_found = contains(keys_of(rest), c[2]);
                present_after = size(s);
            };
            if (name == "static_set") {
                auto set = cuco::static_set{cuco::extent<std::size_t>{capacity},
                                            cuco::empty_key<Key>{kEmpty},
                                            cuco::erased_key<Key>{kErased}};
                set.insert(b.preload.begin(), b.preload.end());
                auto contains = [&](auto keys, std::uint64_t m) {
                    set.contains(keys, keys + m, hit.begin());
                    return std::uint64_t(thrust::count(hit.begin(), hit.begin() + m, true));
                };
                timed(set,
                      [&](const std::array<std::uint64_t, 3>& c) {
                          if (c[0]) set.contains_async(keys_of(first), keys_of(first) + c[0],
                                                       hit.begin());
                          if (c[1]) set.insert_async(keys_of(second), keys_of(second) + c[1]);
                          if (c[2]) set.erase_async(keys_of(rest), keys_of(rest) + c[2]);
                      },
                      [&](std::uint64_t m) {
                          return std::uint64_t(thrust::count(hit.begin(), hit.begin() + m, true));
                      },
                      contains,
                      [](auto& s) { return std::uint64_t(s.size()); });
            } else if (name == "static_map") {
                auto map = cuco::static_map{cuco::extent<std::size_t>{capacity},
                                            cuco::empty_key<Key>{kEmpty},
                                            cuco::empty_value<Value>{kNoValue},
                                            cuco::erased_key<Key>{kErased}};
                map.insert(pre_pairs, pre_pairs + b.n_pre);
                timed(map,
                      [&](const std::array<std::uint64_t, 3>& c) {
                          if (c[0]) map.find_async(keys_of(first), keys_of(first) + c[0],
                                                   found.begin());
                          if (c[1]) map.insert_async(pairs_of(second), pairs_of(second) + c[1]);
                          if (c[2]) map.erase_async(keys_of(rest), keys_of(rest) + c[2]);
                      },
                      [&](std::uint64_t m) {
                          return std::uint64_t(
                              m - thrust::count(found.begin(), found.begin() + m, kNoValue));
                      },
                      [&](auto keys, std::uint64_t m) {
                          map.contains(keys, keys + m, hit.begin());
                          return std::uint64_t(thrust::count(hit.begin(), hit.begin() + m, true));
                      },
                      [](auto& s) { return std::uint64_t(s.size()); });
            } else {
                cuco::dynamic_map<Key, Value> map{capacity, cuco::empty_key<Key>{kEmpty},
                                                  cuco::empty_value<Value>{kNoValue},
                                                  cuco::erased_key<Key>{kErased}};
                map.insert(pre_pairs, pre_pairs + b.n_pre);
                timed(map,
                      [&](const std::array<std::uint64_t, 3>& c) {
                          if (c[0]) map.find(keys_of(first), keys_of(first) + c[0], found.begin());
                          if (c[1]) map.insert(pairs_of(second), pairs_of(second) + c[1]);
                          if (c[2]) map.erase(keys_of(rest), keys_of(rest) + c[2]);
                      },
                      [&](std::uint64_t m) {
                          return std::uint64_t(
                              m - thrust::count(found.begin(), found.begin() + m, kNoValue));
                      },
                      [&](auto keys, std::uint64_t m) {
                          map.contains(keys, keys + m, hit.begin());
                          return std::uint64_t(thrust::count(hit.begin(), hit.begin() + m, true));
                      },
                      [](auto& s) { return std::uint64_t(s.get_size()); });
            }
            seconds.push_back(ms / 1e3);
            // the searches found what they must; afterwards every inserted key is present
            // (inserts of present keys too), no deleted key is, and the size is as expected
            if (found_count != b.found_expected || inserted_found != c[1] || deleted_found != 0 ||
                present_after != b.size_after)
                ok = 0;
        }
        CHECK_CUDA(cudaGetLastError());
        std::printf("%s,%d", name.c_str(), ok);
        for (double s : seconds) std::printf(",%.9g", s);
        std::printf("\n");
        std::fflush(stdout);
    }
    return 0;
}
