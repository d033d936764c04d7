// A plain C++ solution of the goscore problem (seed 000): a BFS over each empty
// region. It is the yardstick BenchmarkSolveProcess runs the scoreboard beside, whole
// process against whole process; it is not part of the product.
#include <cstdio>
#include <cstring>
#include <string>
#include <iostream>

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    char board[19][19];
    int rows = -1;  // -1: waiting for the spacer line
    while (std::getline(std::cin, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (rows < 0) { if (line.empty()) rows = 0; continue; }
        for (int c = 0; c < 19; c++) board[rows][c] = (2 * c + 1 < (int)line.size()) ? line[2 * c + 1] : '+';
        if (++rows < 19) continue;
        rows = -1;
        int black = 0, white = 0;
        static bool seen[19][19];
        memset(seen, 0, sizeof seen);
        for (int r = 0; r < 19; r++) for (int c = 0; c < 19; c++) {
            char v = board[r][c];
            if (v == '@') { black++; continue; }
            if (v == 'O') { white++; continue; }
            if (seen[r][c]) continue;
            int qr[361], qc[361], head = 0, tail = 0, size = 0;
            bool touchB = false, touchW = false;
            seen[r][c] = true; qr[tail] = r; qc[tail++] = c;
            while (head < tail) {
                int y = qr[head], x = qc[head++]; size++;
                const int dy[4] = {-1, 1, 0, 0}, dx[4] = {0, 0, -1, 1};
                for (int d = 0; d < 4; d++) {
                    int ny = y + dy[d], nx = x + dx[d];
                    if (ny < 0 || ny >= 19 || nx < 0 || nx >= 19) continue;
                    char w = board[ny][nx];
                    if (w == '@') touchB = true;
                    else if (w == 'O') touchW = true;
                    else if (!seen[ny][nx]) { seen[ny][nx] = true; qr[tail] = ny; qc[tail++] = nx; }
                }
            }
            if (touchB && !touchW) black += size;
            if (touchW && !touchB) white += size;
        }
        printf("%d %d\n", black, white);
    }
    return 0;
}
