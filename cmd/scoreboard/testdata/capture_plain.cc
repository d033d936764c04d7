// A plain C++ solution of the capture problem (seed 004): the played points in a hash
// map, and after each move a BFS of each neighbouring group that stops at its first
// liberty. A yardstick for the whole-process benchmarks, not part of the product.
#include <cstdio>
#include <unordered_map>
#include <vector>

typedef long long ll;
struct cell { int col, seen; };
static std::unordered_map<ll, cell> board;  // col 1 black, 2 white; absent: empty
static int stamp;
static ll S;
static ll key(ll x, ll y) { return x << 32 | y; }
static int at(ll x, ll y) { auto it = board.find(key(x, y)); return it == board.end() ? 0 : it->second.col; }
static const int dx[4] = {-1, 1, 0, 0}, dy[4] = {0, 0, -1, 1};

// dead returns the group at (x,y) in out if it has no liberty, else clears out.
static bool dead(ll x, ll y, std::vector<ll> &out) {
    int col = at(x, y);
    out.clear();
    static std::vector<std::pair<ll, ll>> q;
    q.assign(1, {x, y});
    board[key(x, y)].seen = ++stamp;
    for (size_t i = 0; i < q.size(); i++) {
        for (int d = 0; d < 4; d++) {
            ll nx = q[i].first + dx[d], ny = q[i].second + dy[d];
            if (nx < 0 || ny < 0 || nx >= S || ny >= S) continue;
            auto it = board.find(key(nx, ny));
            if (it == board.end()) return false;
            if (it->second.col == col && it->second.seen != stamp) { it->second.seen = stamp; q.push_back({nx, ny}); }
        }
    }
    for (auto &p : q) out.push_back(key(p.first, p.second));
    return true;
}

int main() {
    int M;
    std::vector<ll> grp;
    while (scanf("%lld %d", &S, &M) == 2) {
        board.clear();
        long captured = 0;
        for (int i = 0; i < M; i++) {
            ll x, y;
            if (scanf("%lld %lld", &x, &y) != 2) return 1;
            int col = 1 + i % 2;
            board[key(x, y)] = cell{col, 0};
            for (int d = 0; d < 4; d++) {
                ll nx = x + dx[d], ny = y + dy[d];
                if (nx < 0 || ny < 0 || nx >= S || ny >= S || at(nx, ny) != 3 - col) continue;
                if (dead(nx, ny, grp)) { for (ll k : grp) board.erase(k); captured += grp.size(); }
            }
            if (dead(x, y, grp)) { for (ll k : grp) board.erase(k); captured += grp.size(); }
        }
        printf("%ld\n", captured);
    }
    return 0;
}
