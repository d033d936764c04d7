// A plain C++ solution of the othello problem (seed 003): a char board and ray scans
// in the 8 directions. A yardstick for the whole-process benchmarks, not part of the
// product.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

static char b[8][9];
static const int dr[8] = {-1, -1, -1, 0, 0, 1, 1, 1}, dc[8] = {-1, 0, 1, -1, 1, -1, 0, 1};

static int flips(int r, int c, char me, bool apply) {
    if (b[r][c] != '-') return 0;
    char op = me == 'B' ? 'W' : 'B';
    int total = 0;
    for (int d = 0; d < 8; d++) {
        int y = r + dr[d], x = c + dc[d], k = 0;
        while (y >= 0 && y < 8 && x >= 0 && x < 8 && b[y][x] == op) { y += dr[d]; x += dc[d]; k++; }
        if (k == 0 || y < 0 || y >= 8 || x < 0 || x >= 8 || b[y][x] != me) continue;
        total += k;
        if (apply) for (int i = 1; i <= k; i++) b[r + i * dr[d]][c + i * dc[d]] = me;
    }
    return total;
}

static bool any(char me) {
    for (int r = 0; r < 8; r++) for (int c = 0; c < 8; c++) if (flips(r, c, me, false)) return true;
    return false;
}

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        int games = atoi(line.c_str());
        for (int g = 0; g < games; g++) {
            for (int r = 0; r < 8; r++) { std::getline(std::cin, line); memcpy(b[r], line.c_str(), 8); }
            std::getline(std::cin, line);
            char me = line[0];
            if (g > 0) printf("\n");
            while (std::getline(std::cin, line)) {
                if (line[0] == 'L') {
                    bool first = true;
                    for (int r = 0; r < 8; r++) for (int c = 0; c < 8; c++) if (flips(r, c, me, false)) {
                        printf(first ? "(%d,%d)" : " (%d,%d)", r + 1, c + 1);
                        first = false;
                    }
                    printf(first ? "No legal move.\n" : "\n");
                } else if (line[0] == 'M') {
                    if (!any(me)) me = me == 'B' ? 'W' : 'B';
                    int r = line[1] - '1', c = line[2] - '1';
                    flips(r, c, me, true);
                    b[r][c] = me;
                    me = me == 'B' ? 'W' : 'B';
                    int nb = 0, nw = 0;
                    for (int y = 0; y < 8; y++) for (int x = 0; x < 8; x++) { nb += b[y][x] == 'B'; nw += b[y][x] == 'W'; }
                    printf("Black - %2d White - %2d\n", nb, nw);
                } else if (line[0] == 'Q') {
                    for (int r = 0; r < 8; r++) printf("%.8s\n", b[r]);
                    break;
                }
            }
        }
    }
    return 0;
}
