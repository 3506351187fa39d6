// What chapter 4's peer drivers (cuco_hash.cu, slab_hash.cu) share: the batch file that
// bench/moazeni2013_ch4_peers.py writes, and the delay kernel of their timing.
//
// The file: uint64 n_preload, uint64 n_batch, float32 preload[n_preload], uint8 ops[n_batch]
// (0 search, 1 insert, 2 delete), float32 keys[n_batch], uint8 expected[n_batch] (each
// operation's result: 1 true, 0 false), uint64 the keys present after the batch. A key is
// its float's bits (keys in (0, 1) are positive and below 2^30). No key appears twice in a
// batch, so every result is the schedule's no matter the order (absent keys included).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

struct PeerBatch {
    std::vector<std::uint32_t> preload;  // the preloaded keys' bits
    std::vector<std::uint8_t> ops;
    std::vector<std::uint32_t> keys;  // the batch's keys' bits
    std::vector<std::uint8_t> expected;  // each operation's result
    std::uint64_t size_after = 0;  // the keys present after the batch
};

static std::vector<std::uint32_t> float_bits(const std::vector<float>& x) {
    std::vector<std::uint32_t> out(x.size());
    std::memcpy(out.data(), x.data(), x.size() * sizeof(float));
    return out;
}

// The batch in `path`, or false (having said why on stderr) where it is short or unreadable.
static bool read_batch(const char* path, const char* program, PeerBatch& out) {
    std::ifstream in(path, std::ios::binary);
    std::uint64_t n_pre = 0, n_batch = 0;
    in.read(reinterpret_cast<char*>(&n_pre), 8);
    in.read(reinterpret_cast<char*>(&n_batch), 8);
    std::vector<float> pre(n_pre), keys(n_batch);
    out.ops.resize(n_batch);
    in.read(reinterpret_cast<char*>(pre.data()), n_pre * 4);
    in.read(reinterpret_cast<char*>(out.ops.data()), n_batch);
    in.read(reinterpret_cast<char*>(keys.data()), n_batch * 4);
    out.expected.resize(n_batch);
    in.read(reinterpret_cast<char*>(out.expected.data()), n_batch);
    in.read(reinterpret_cast<char*>(&out.size_after), 8);
    if (!in) {
        std::fprintf(stderr, "%s: %s is short or unreadable\n", program, path);
        return false;
    }
    out.preload = float_bits(pre);
    out.keys = float_bits(keys);
    return true;
}

// Holds the stream ~ns nanoseconds, so that the events around a batch time the device's
// work and not the host's launch latency (as ht_delay does for our table).
__global__ void delay(long long ns) {
    const long long end = clock64() + ns * 2;
    while (clock64() < end) __nanosleep(1000);
}
