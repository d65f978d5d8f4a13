// The standard normal distribution, accurate to double precision where group-sequential boundaries need it.

const LOG_SQRT_2PI = 0.9189385332046728;

/** The standard normal density. */
export function normalDensity(x: number): number {
  return Math.exp(-0.5 * x * x - LOG_SQRT_2PI);
}

// W. J. Cody's rational Chebyshev approximations (Math. Comp. 23, 1969; ACM TOMS 19, 1993, ANORM), as R's pnorm.
const A = [2.2352520354606837, 161.02823106855587, 1067.6894854603709, 18154.98125334356, 0.06568233791820745];
const B = [47.202581904688245, 976.0985517377767, 10260.932208618979, 45507.78933502673];
const C = [
  0.39894151208813466, 8.883149794388377, 93.50665613217785, 597.2702763948002, 2494.5375852903726,
  6848.190450536283, 11602.65143764735, 9842.714838383978, 1.0765576773720192e-08,
];
const D = [
  22.266688044328117, 235.387901782625, 1519.3775994075547, 6485.558298266761, 18615.571640885097,
  34900.95272114598, 38912.00328609327, 19685.429676859992,
];
const P = [0.215898534057957, 0.12740116116024736, 0.022235277870649807, 0.0014216191932278934, 2.9112874951168793e-05, 0.023073441764940174];
const Q = [1.284260096144911, 0.4682382124808651, 0.06598813786892856, 0.0037823963320275824, 7.297515550839662e-05];
const SQRT_32 = 5.656854249492381;
const ONE_OVER_SQRT_2PI = 0.3989422804014327;

/** exp(-y^2/2) times `factor`, split at y rounded to 1/16 so the square loses no precision (Cody's device). */
function gaussianTail(y: number, factor: number): number {
  const ysq = Math.trunc(y * 16) / 16;
  const del = (y - ysq) * (y + ysq);
  return Math.exp(-ysq * ysq * 0.5) * Math.exp(-del * 0.5) * factor;
}

/** The standard normal distribution function, Cody's algorithm (relative error about 1e-16 in both tails). */
export function normalCdf(x: number): number {
  const y = Math.abs(x);
  if (y <= 0.67448975) {
    const xsq = y > 1e-16 ? x * x : 0;
    let num = (A[4] as number) * xsq;
    let den = xsq;
    for (let i = 0; i < 3; i++) {
      num = (num + (A[i] as number)) * xsq;
      den = (den + (B[i] as number)) * xsq;
    }
    return 0.5 + (x * (num + (A[3] as number))) / (den + (B[3] as number));
  }
  let upper: number;
  if (y <= SQRT_32) {
    let num = (C[8] as number) * y;
    let den = y;
    for (let i = 0; i < 7; i++) {
      num = (num + (C[i] as number)) * y;
      den = (den + (D[i] as number)) * y;
    }
    upper = gaussianTail(y, (num + (C[7] as number)) / (den + (D[7] as number)));
  } else if (y < 38.5) {
    const xsq = 1 / (x * x);
    let num = (P[5] as number) * xsq;
    let den = xsq;
    for (let i = 0; i < 4; i++) {
      num = (num + (P[i] as number)) * xsq;
      den = (den + (Q[i] as number)) * xsq;
    }
    const r = (xsq * (num + (P[4] as number))) / (den + (Q[4] as number));
    upper = gaussianTail(y, (ONE_OVER_SQRT_2PI - r) / y);
  } else upper = 0;
  return x > 0 ? 1 - upper : upper;
}

/** The standard normal quantile, Wichura's algorithm AS 241 (PPND16, relative error about 1e-16). */
export function normalQuantile(p: number): number {
  if (p <= 0) return -Infinity;
  if (p >= 1) return Infinity;
  const q = p - 0.5;
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q;
    return (
      (q *
        (((((((r * 2509.0809287301227 + 33430.57558358813) * r + 67265.7709270087) * r + 45921.95393154987) * r +
          13731.69376550946) * r + 1971.5909503065513) * r + 133.14166789178438) * r + 3.3871328727963665)) /
      (((((((r * 5226.495278852546 + 28729.085735721943) * r + 39307.89580009271) * r + 21213.794301586597) * r +
        5394.196021424751) * r + 687.1870074920579) * r + 42.31333070160091) * r + 1)
    );
  }
  let r = Math.sqrt(-Math.log(q < 0 ? p : 1 - p));
  let value: number;
  if (r <= 5) {
    r -= 1.6;
    value =
      (((((((r * 0.0007745450142783414 + 0.022723844989269184) * r + 0.2417807251774506) * r + 1.2704582524523684) * r +
        3.6478483247632045) * r + 5.769497221460691) * r + 4.630337846156546) * r + 1.4234371107496835) /
      (((((((r * 1.0507500716444169e-09 + 0.0005475938084995345) * r + 0.015198666563616457) * r + 0.14810397642748008) * r +
        0.6897673349851) * r + 1.6763848301838038) * r + 2.053191626637759) * r + 1);
  } else {
    r -= 5;
    value =
      (((((((r * 2.0103343992922881e-07 + 2.7115555687434876e-05) * r + 0.0012426609473880784) * r + 0.026532189526576124) * r +
        0.29656057182850487) * r + 1.7848265399172913) * r + 5.463784911164114) * r + 6.657904643501103) /
      (((((((r * 2.0442631033899397e-15 + 1.421511758316446e-07) * r + 1.8463183175100548e-05) * r + 0.0007868691311456133) * r +
        0.014875361290850615) * r + 0.1369298809227358) * r + 0.599832206555888) * r + 1);
  }
  return q < 0 ? -value : value;
}
