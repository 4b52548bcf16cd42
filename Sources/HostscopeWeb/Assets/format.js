// Figures as people read them, matching the command line's FigureText: sizes in binary units, rates per
// second, shares with one decimal.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

export function bytes(value) {
  if (value == null || !Number.isFinite(value)) return '–';
  let amount = value;
  let unit = 0;
  while (Math.abs(amount) >= 1024 && unit < UNITS.length - 1) {
    amount /= 1024;
    unit += 1;
  }
  return (unit === 0 ? String(Math.round(amount)) : amount.toFixed(amount < 10 ? 1 : 0)) + ' ' + UNITS[unit];
}

export function rate(value) {
  return value == null || !Number.isFinite(value) ? '–' : bytes(value) + '/s';
}

export function percent(value) {
  return value == null || !Number.isFinite(value) ? '–' : value.toFixed(1) + ' %';
}

export function number(value, digits = 2) {
  return value == null || !Number.isFinite(value) ? '–' : value.toFixed(digits);
}

/** A span of time in its two largest units: `3 d 4 h`, `12 min 5 s`, `40 s`. */
export function duration(seconds) {
  if (seconds == null || !Number.isFinite(seconds)) return '–';
  const s = Math.max(0, Math.floor(seconds));
  const parts = [
    [Math.floor(s / 86400), 'd'],
    [Math.floor((s % 86400) / 3600), 'h'],
    [Math.floor((s % 3600) / 60), 'min'],
    [s % 60, 's'],
  ];
  const first = parts.findIndex(([amount]) => amount > 0);
  if (first < 0) return '0 s';
  return parts
    .slice(first, first + 2)
    .filter(([amount]) => amount > 0)
    .map(([amount, unit]) => amount + ' ' + unit)
    .join(' ');
}

export function milliseconds(value) {
  if (value == null || !Number.isFinite(value)) return '–';
  return value < 1000 ? value.toFixed(value < 10 ? 2 : 0) + ' ms' : (value / 1000).toFixed(2) + ' s';
}

// What toLocaleTimeString([], { hour12: false }) and toLocaleDateString() write, made once: each of those calls
// builds a new formatter (a tenth of a millisecond or more), which a list of hundreds of alerts felt.
const CLOCK = new Intl.DateTimeFormat([], { hour: 'numeric', minute: 'numeric', second: 'numeric', hour12: false });
const DAY = new Intl.DateTimeFormat([], { year: 'numeric', month: 'numeric', day: 'numeric' });

/** A time of day (local), with the date when it is not today. */
export function time(date) {
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) return '–';
  const now = new Date();
  const clock = CLOCK.format(date);
  return date.toDateString() === now.toDateString() ? clock : DAY.format(date) + ' ' + clock;
}
