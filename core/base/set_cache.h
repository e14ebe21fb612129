// set_cache.h — SetCache, the one memo every per-thread cache of the core is made of (table picks, GEMM plans and
// their records, MoE lookups, tile picks, attention rates, routed-expert envelopes).
//
// The policy, stated once:
//  - a cache holds Sets x Ways entries; a key lives in the set chosen by the top bits of a 64-bit hash the caller
//    gives (Sets a power of two; with Sets = 1 the hash is not used and the cache is fully associative);
//  - a lookup searches the ways of its set in order and compares keys with ==;
//  - a miss takes the least recently used way of the set (an empty way first: it was never used) and the caller
//    fills it; a hit refreshes the entry's use;
//  - a key holds everything its value depends on, the table set's generation (Tables::generation()) included, so
//    nothing is invalidated one by one: a stale entry never matches again and ages out. clear() empties the whole
//    cache when something outside the keys changes (gemm_op's GemmEnv);
//  - one instance per thread (declared thread_local at its use): no locks, and the values are the same whatever
//    the thread or the order of the queries (a cache is a memo of a pure function; tests/unit check hits against
//    fresh computations through the outputs, scripts/output_snapshot.sh byte for byte).
//
//   thread_local SetCache<Key, Value, 4, 4> cache;
//   if (const Value* v = cache.find(key, hash)) return *v;
//   Value& v = cache.insert(key, hash);   // its previous contents (vectors keep their capacity): overwrite them
//
// Not made of it: the one-entry "last answer" memos that compare a query with the previous one only (family_index's
// name, interp_by's log, estimate()'s table families, gemm_op's GemmEnv, build_layer's attention and FFN side of the
// previous layer, valid within one estimate): a key there would cost a copy (strings) for nothing to choose between.
//
// An inserted entry is written by the caller before the next insert into the same cache; a function that fills
// an entry and may re-enter its own cache meanwhile copies the key first (none does today).
#pragma once
#include <cstdint>

namespace moe {

template <class Key, class Value, unsigned Sets, unsigned Ways>
class SetCache {
    static_assert(Sets >= 1 && (Sets & (Sets - 1)) == 0, "SetCache: Sets must be a power of two");
    static_assert(Ways >= 1, "SetCache: at least one way");

public:
    // The value stored under `key`, or nullptr.
    Value* find(const Key& key, std::uint64_t hash = 0) {
        Slot* set = set_of(hash);
        for (unsigned i = 0; i < Ways; ++i)
            if (set[i].used != 0 && set[i].key == key) {
                set[i].used = ++clock_;
                return &set[i].value;
            }
        return nullptr;
    }
    // The entry for `key` after a miss: the least recently used way of its set, its key set, its value as the
    // evicted entry left it (for the caller to overwrite).
    Value& insert(const Key& key, std::uint64_t hash = 0) {
        Slot* set = set_of(hash);
        Slot* victim = &set[0];
        for (unsigned i = 1; i < Ways; ++i)
            if (set[i].used < victim->used) victim = &set[i];
        victim->key = key;
        victim->used = ++clock_;
        return victim->value;
    }
    // Every entry forgotten (their values' storage kept).
    void clear() {
        for (Slot& s : slots_) s.used = 0;
    }

private:
    struct Slot {
        Key key{};
        Value value{};
        std::uint64_t used = 0;  // the clock at its last use; 0 = empty
    };
    static constexpr unsigned log2(unsigned n) { return n <= 1 ? 0 : 1 + log2(n / 2); }
    Slot* set_of(std::uint64_t hash) {
        if constexpr (Sets == 1) {
            (void)hash;
            return slots_;
        } else {
            return slots_ + (hash >> (64 - log2(Sets))) * Ways;
        }
    }
    Slot slots_[Sets * Ways];
    std::uint64_t clock_ = 0;
};

}  // namespace moe
