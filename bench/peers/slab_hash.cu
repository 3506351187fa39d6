// Chapter 4's second peer (Moazeni 2013): SlabHash (owensgroup; Ashkiani et al.,
// IPDPS 2018), its concurrent map, on the batches our hash table runs. This driver is ours;
// SlabHash and SlabAlloc are the user's own checkouts (peers/SlabHash, its SlabAlloc
// submodule in peers/SlabHash/SlabAlloc; git-ignored), included, never copied here. Build
// and run: bench/device/slab_build.sh, bench/moazeni2013_ch4_peers.py.
//
//   slab_hash IN.bin KEYS_PER_BUCKET REPEATS   -> one CSV line on stdout
//
// IN.bin: batch_file.cuh's. A key is its float's bits: keys in (0, 1) are below
// 2^30, the width SlabHash's mixed-batch kernel leaves a key (its top two bits carry the
// operation). Each repeat builds a map of (n_preload + inserts) / KEYS_PER_BUCKET buckets
// (slabs of 15 pairs), builds it from the preload (untimed), then times the whole mixed
// batch in one launch (SlabHash's batched_operations, as our table runs it: one kernel,
// every kind). SlabHash has no set with deletes: its map, each key with a 4-byte value.
// No key appears twice in a batch, so every result is known (batch_file.cuh's expected):
// the driver checks every search's answer, and afterwards every inserted key is found and
// no deleted one. Output: "SlabHash", the check (1 = ok), then every repeat's seconds.
#include "gpu_hash_table.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "batch_file.cuh"

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: slab_hash IN.bin KEYS_PER_BUCKET REPEATS\n");
        return 2;
    }
    PeerBatch b;
    if (!read_batch(argv[1], "slab_hash", b)) return 2;
    const std::uint64_t n_pre = b.preload.size(), n_batch = b.ops.size();
    const double per_bucket = std::atof(argv[2]);
    const int repeats = std::atoi(argv[3]);
    std::vector<uint32_t> pre_bits = b.preload, values(n_pre), batch(n_batch), inserted, deleted;
    for (std::uint64_t i = 0; i < n_pre; ++i) values[i] = static_cast<uint32_t>(i);
    static const uint32_t code[3] = {3u, 1u, 2u};  // ours (search, insert, delete) -> SlabHash's
    const std::vector<std::uint8_t>& ops = b.ops;
    for (std::uint64_t i = 0; i < n_batch; ++i) {
        const uint32_t bits = b.keys[i];
        if (bits >> 30) {
            std::fprintf(stderr, "slab_hash: key bits %08x need more than 30 bits\n", bits);
            return 2;
        }
        batch[i] = (code[ops[i]] << 30) | bits;
        if (ops[i] == 1) inserted.push_back(bits);
        if (ops[i] == 2) deleted.push_back(bits);
    }
    const auto buckets = static_cast<uint32_t>((n_pre + inserted.size()) / per_bucket) + 1;
    const auto max_keys = static_cast<uint32_t>(std::max<std::uint64_t>(n_pre, n_batch));
    std::vector<uint32_t> results(n_batch), found(max_keys);
    uint32_t* d_ops = nullptr;
    cudaMalloc(&d_ops, n_batch * 4);
    cudaEvent_t start, end;
    cudaEventCreate(&start);
    cudaEventCreate(&end);
    std::vector<double> seconds;
    int ok = 1;
    for (int r = 0; r < repeats; ++r) {
        gpu_hash_table<uint32_t, uint32_t, SlabHashTypeT::ConcurrentMap> map(max_keys, buckets, 0,
                                                                             2013 + r);
        map.hash_build(pre_bits.data(), values.data(), static_cast<uint32_t>(n_pre));
        // SlabHash's own batched_operations times from the host's side of the launch; the
        // batch is timed here instead, behind a delay kernel, as the other drivers do
        cudaMemcpy(d_ops, batch.data(), n_batch * 4, cudaMemcpyHostToDevice);
        cudaMemset(map.d_result_, 0xFF, n_batch * 4);
        cudaDeviceSynchronize();
        delay<<<1, 1>>>(200000);
        cudaEventRecord(start);
        map.slab_hash_->batchedOperation(d_ops, map.d_result_, static_cast<uint32_t>(n_batch));
        cudaEventRecord(end);
        cudaEventSynchronize(end);
        float ms = 0;
        cudaEventElapsedTime(&ms, start, end);
        cudaMemcpy(results.data(), map.d_result_, n_batch * 4, cudaMemcpyDeviceToHost);
        seconds.push_back(ms / 1e3);
        for (std::uint64_t i = 0; i < n_batch; ++i)
            if (ops[i] == 0 && (results[i] != SEARCH_NOT_FOUND) != (b.expected[i] != 0)) ok = 0;
        if (!inserted.empty()) {
            map.hash_search(inserted.data(), found.data(), static_cast<uint32_t>(inserted.size()));
            for (std::size_t i = 0; i < inserted.size(); ++i)
                if (found[i] == SEARCH_NOT_FOUND) ok = 0;
        }
        if (!deleted.empty()) {
            map.hash_search(deleted.data(), found.data(), static_cast<uint32_t>(deleted.size()));
            for (std::size_t i = 0; i < deleted.size(); ++i)
                if (found[i] != SEARCH_NOT_FOUND) ok = 0;
        }
    }
    std::printf("SlabHash,%d", ok);
    for (double s : seconds) std::printf(",%.9g", s);
    std::printf("\n");
    return 0;
}
