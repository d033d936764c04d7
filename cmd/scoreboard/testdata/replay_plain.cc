// A plain C++ solution of the replay problem (seed 001): a dense board, and after each
// placement a BFS of every neighbouring group to find the captured ones; the score is a
// BFS over each empty region. A yardstick for the whole-process benchmarks, not part of
// the product.
#include <cstdio>
#include <cstring>

static int n, board[19][19];
static int seen[19][19], stamp;
static int qr[361], qc[361];
static const int dr[4] = {-1, 1, 0, 0}, dc[4] = {0, 0, -1, 1};

// group collects the group at (r,c) in qr/qc and returns its size; *free says whether
// it has a liberty.
static int group(int r, int c, bool *free) {
    int col = board[r][c], head = 0, tail = 0;
    *free = false;
    stamp++;
    seen[r][c] = stamp; qr[tail] = r; qc[tail++] = c;
    while (head < tail) {
        int y = qr[head], x = qc[head++];
        for (int d = 0; d < 4; d++) {
            int ny = y + dr[d], nx = x + dc[d];
            if (ny < 0 || ny >= n || nx < 0 || nx >= n) continue;
            if (board[ny][nx] == 0) *free = true;
            else if (board[ny][nx] == col && seen[ny][nx] != stamp) { seen[ny][nx] = stamp; qr[tail] = ny; qc[tail++] = nx; }
        }
    }
    return tail;
}

int main() {
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        int m;
        if (sscanf(line, "%d %d", &n, &m) != 2) continue;
        if (n == 0 && m == 0) continue;
        memset(board, 0, sizeof board);
        int cap[3] = {0, 0, 0};
        int h = (n - 1) / 2;
        for (int i = 0; i < m; i++) {
            char p; int x, y;
            if (!fgets(line, sizeof line, stdin)) break;
            sscanf(line, " %c(%d,%d)", &p, &x, &y);
            int col = p == 'B' ? 1 : 2, r = y + h, c = x + h;
            board[r][c] = col;
            for (int d = 0; d < 4; d++) {
                int nr = r + dr[d], nc = c + dc[d];
                if (nr < 0 || nr >= n || nc < 0 || nc >= n || board[nr][nc] != 3 - col) continue;
                bool free;
                int size = group(nr, nc, &free);
                if (free) continue;
                for (int k = 0; k < size; k++) board[qr[k]][qc[k]] = 0;
                cap[col] += size;
            }
        }
        int own[3] = {0, 0, 0};
        stamp++;
        for (int r = 0; r < n; r++) for (int c = 0; c < n; c++) {
            if (board[r][c] != 0 || seen[r][c] == stamp) continue;
            int head = 0, tail = 0; bool tb = false, tw = false;
            seen[r][c] = stamp; qr[tail] = r; qc[tail++] = c;
            while (head < tail) {
                int y = qr[head], x = qc[head++];
                for (int d = 0; d < 4; d++) {
                    int ny = y + dr[d], nx = x + dc[d];
                    if (ny < 0 || ny >= n || nx < 0 || nx >= n) continue;
                    int v = board[ny][nx];
                    if (v == 1) tb = true;
                    else if (v == 2) tw = true;
                    else if (seen[ny][nx] != stamp) { seen[ny][nx] = stamp; qr[tail] = ny; qc[tail++] = nx; }
                }
            }
            if (tb && !tw) own[1] += tail;
            if (tw && !tb) own[2] += tail;
        }
        printf("%d %d\n", own[1] + cap[1], own[2] + cap[2]);
    }
    return 0;
}
