# gen_cap.py: the capture inputs of F6 and F10 (valid units, 25,000 distinct moves)
import random, sys
def unit(seed, pad):
    random.seed(seed)
    M = 25000
    pts = random.sample([(x, y) for x in range(1, 161) for y in range(1, 161)], M)
    w = (lambda s: s.ljust(64)) if pad else (lambda s: s)
    return "\n".join([w("100000 %d" % M)] + [w("%d %d" % p) for p in pts]) + "\n"
# cap11.in: 11 units, unpadded, then the end "0 0"   (F6: solveflood)
open("cap11.in", "w").write(unit(1, False) * 11 + "0 0\n")
# capbig.unit: one unit, lines padded to 64: 1,625,065 bytes   (F10)
open("capbig.unit", "w").write(unit(2, True))
