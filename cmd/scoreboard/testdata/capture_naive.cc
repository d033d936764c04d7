// A naive C++ solution of the capture problem (seed 004): the played points in an
// ordered map, and after each move a full BFS of each neighbouring group (no early
// stop at a liberty). The worst-case yardstick for the whole-process benchmarks, not
// part of the product.
#include <cstdio>
#include <map>
#include <set>
#include <vector>

typedef std::pair<long long, long long> pt;
static std::map<pt, int> board;
static long long S;
static int at(pt p) { auto it = board.find(p); return it == board.end() ? 0 : it->second; }
static const int dx[4] = {-1, 1, 0, 0}, dy[4] = {0, 0, -1, 1};

static long removeIfDead(pt p) {
    int col = at(p);
    if (col == 0) return 0;
    std::set<pt> seen = {p};
    std::vector<pt> q = {p};
    bool free = false;
    for (size_t i = 0; i < q.size(); i++) {
        for (int d = 0; d < 4; d++) {
            pt n = {q[i].first + dx[d], q[i].second + dy[d]};
            if (n.first < 0 || n.second < 0 || n.first >= S || n.second >= S) continue;
            int v = at(n);
            if (v == 0) free = true;
            else if (v == col && seen.insert(n).second) q.push_back(n);
        }
    }
    if (free) return 0;
    for (auto &s : q) board.erase(s);
    return q.size();
}

int main() {
    int M;
    while (scanf("%lld %d", &S, &M) == 2) {
        board.clear();
        long captured = 0;
        for (int i = 0; i < M; i++) {
            long long x, y;
            if (scanf("%lld %lld", &x, &y) != 2) return 1;
            int col = 1 + i % 2;
            board[{x, y}] = col;
            for (int d = 0; d < 4; d++) {
                pt n = {x + dx[d], y + dy[d]};
                if (at(n) == 3 - col) captured += removeIfDead(n);
            }
            captured += removeIfDead({x, y});
        }
        printf("%ld\n", captured);
    }
    return 0;
}
