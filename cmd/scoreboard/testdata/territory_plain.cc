// A plain C++ solution of the territory problem (seed 002): scanf the stones, a BFS
// over each empty region. A yardstick for the whole-process benchmarks, not part of
// the product.
#include <cstdio>
#include <cstring>

int main() {
    int n;
    static int board[19][19], seen[19][19], qr[361], qc[361];
    const int dr[4] = {-1, 1, 0, 0}, dc[4] = {0, 0, -1, 1};
    while (scanf("%d", &n) == 1 && n != 0) {
        int b, w;
        if (scanf("%d %d", &b, &w) != 2) break;
        memset(board, 0, sizeof board);
        memset(seen, 0, sizeof seen);
        for (int i = 0; i < b + w; i++) {
            int r, c;
            if (scanf("%d %d", &r, &c) != 2) return 1;
            board[r - 1][c - 1] = i < b ? 1 : 2;
        }
        int own[3] = {0, 0, 0};
        for (int r = 0; r < n; r++) for (int c = 0; c < n; c++) {
            if (board[r][c] != 0 || seen[r][c]) continue;
            int head = 0, tail = 0; bool tb = false, tw = false;
            seen[r][c] = 1; qr[tail] = r; qc[tail++] = c;
            while (head < tail) {
                int y = qr[head], x = qc[head++];
                for (int d = 0; d < 4; d++) {
                    int ny = y + dr[d], nx = x + dc[d];
                    if (ny < 0 || ny >= n || nx < 0 || nx >= n) continue;
                    int v = board[ny][nx];
                    if (v == 1) tb = true;
                    else if (v == 2) tw = true;
                    else if (!seen[ny][nx]) { seen[ny][nx] = 1; qr[tail] = ny; qc[tail++] = nx; }
                }
            }
            if (tb && !tw) own[1] += tail;
            if (tw && !tb) own[2] += tail;
        }
        if (own[1] > own[2]) printf("Black wins by %d\n", own[1] - own[2]);
        else if (own[2] > own[1]) printf("White wins by %d\n", own[2] - own[1]);
        else printf("Draw\n");
    }
    return 0;
}
