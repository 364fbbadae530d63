"""Derives ExpFastF64's polynomial (src/simd/convert-inl.h): a Chebyshev fit of degree 9 to
q(r) = (e^r - 1 - r) / r^2 on [-ln2/2, ln2/2] (slightly widened), in 50-digit arithmetic, its
coefficients rounded to double, and the relative error of 1 + r + r^2 q(r) with them. Needs
mpmath (a dependency of sympy, in the project's development environment).

    python tools/exp_f64_coefficients.py
"""

import mpmath as mp


def main():
    mp.mp.dps = 50
    half = mp.log(2) / 2

    def q(r):
        return mp.mpf(1) / 2 if abs(r) < mp.mpf("1e-20") else (mp.exp(r) - 1 - r) / r**2

    poly, _ = mp.chebyfit(q, [-half * 1.0001, half * 1.0001], 10, error=True)
    coeffs = [float(c) for c in reversed(poly)]  # c2 (of r^2) first
    for k, c in enumerate(coeffs):
        print(f"c{k + 2} = {c.hex()}")
    worst = mp.mpf(0)
    for i in range(4001):
        r = -half + 2 * half * i / 4000
        acc = mp.mpf(0)
        for c in reversed(coeffs):
            acc = acc * r + mp.mpf(c)
        worst = max(worst, abs((1 + r + r * r * acc) / mp.exp(r) - 1))
    print(f"relative error {mp.nstr(worst, 3)} = {mp.nstr(worst / mp.mpf(2) ** -52, 3)} ulp")


if __name__ == "__main__":
    main()
