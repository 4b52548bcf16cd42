// Charts drawn on canvas by the page itself: no library, nothing that parses markup. A series is drawn
// as min/max per pixel column when it has more points than pixels, so 7 days at 15 s (40,320 points)
// cost one pass over the data and a path of at most two points per column. A `null` value, or a step in
// time longer than `gap`, breaks the line: a host that was down shows as a gap.

/** A colour of the theme; reading it costs a style computation, so callers read it once per frame. */
export function themeColor(name, fallback) {
  const value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return value || fallback;
}

function prepare(canvas) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth || Number(canvas.getAttribute('width'));
  const height = canvas.clientHeight || Number(canvas.getAttribute('height'));
  if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
  }
  const context = canvas.getContext('2d');
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  context.clearRect(0, 0, width, height);
  return { context, width, height };
}

/**
 * A small line of the latest values (no axes), for a table cell, in `color`. It reads nothing of the layout
 * (the canvas keeps the size of its attributes), so a table of 300 of them is drawn without reflows.
 */
export function sparkline(canvas, values, color) {
  const width = canvas.width;
  const height = canvas.height;
  const context = canvas.getContext('2d');
  context.clearRect(0, 0, width, height);
  const finite = values.filter((value) => value != null && Number.isFinite(value));
  if (finite.length < 2) return;
  const top = Math.max(...finite) || 1;
  context.strokeStyle = color;
  context.lineWidth = 1;
  context.beginPath();
  let pen = false;
  values.forEach((value, index) => {
    if (value == null || !Number.isFinite(value)) {
      pen = false;
      return;
    }
    const x = (index / (values.length - 1)) * (width - 1);
    const y = height - 1 - (value / top) * (height - 2);
    if (pen) context.lineTo(x, y);
    else context.moveTo(x, y);
    pen = true;
  });
  context.stroke();
}

export const PALETTE = ['#1f6feb', '#d73a49', '#e3b341', '#2ea043', '#a371f7', '#f778ba', '#39c5cf', '#db6d28'];

/**
 * A time chart: `times` in ms (ascending), `series` = [{label, values}] aligned with times; `from`/`to` the
 * shown range; `format` labels the y axis; `gap` (ms) the longest step drawn as a line; `max` a fixed top.
 * Answers `{segments}`: the pieces of the series drawn in most pieces (1 for an unbroken line).
 */
export function timeChart(canvas, { times, series, from, to, format, gap, max }) {
  const { context, width, height } = prepare(canvas);
  const left = 64;
  const right = 8;
  const top = 8;
  const bottom = 20;
  const plotWidth = Math.max(10, width - left - right);
  const plotHeight = Math.max(10, height - top - bottom);
  let high = max ?? 0;
  if (max == null) {
    for (const { values } of series) {
      for (const value of values) if (value != null && value > high) high = value;
    }
    high = high > 0 ? high * 1.1 : 1;
  }
  const span = Math.max(1, to - from);
  const xOf = (time) => left + ((time - from) / span) * plotWidth;
  const yOf = (value) => top + plotHeight - (value / high) * plotHeight;

  context.font = '11px system-ui, sans-serif';
  context.fillStyle = themeColor('--muted', '#666');
  context.strokeStyle = themeColor('--grid', '#ddd');
  context.lineWidth = 1;
  context.textBaseline = 'middle';
  context.textAlign = 'right';
  for (let step = 0; step <= 4; step += 1) {
    const value = (high * step) / 4;
    const y = Math.round(yOf(value)) + 0.5;
    context.beginPath();
    context.moveTo(left, y);
    context.lineTo(left + plotWidth, y);
    context.stroke();
    context.fillText(format(value), left - 6, y);
  }
  context.textAlign = 'center';
  context.textBaseline = 'top';
  const long = span > 2 * 86400000;
  for (let step = 0; step <= 4; step += 1) {
    const time = from + (span * step) / 4;
    const date = new Date(time);
    const label = long
      ? date.toLocaleDateString([], { month: 'short', day: 'numeric' }) + ' ' + date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false })
      : date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false });
    context.fillText(label, Math.min(Math.max(xOf(time), left + 30), left + plotWidth - 30), top + plotHeight + 4);
  }

  let segments = 0;
  series.forEach(({ values, color }, index) => {
    let drawn = 0;
    context.strokeStyle = color || PALETTE[index % PALETTE.length];
    context.lineWidth = 1.5;
    context.beginPath();
    let pen = false;
    let lastTime = null;
    let column = null;
    let low = 0;
    let peak = 0;
    let first = 0;
    let last = 0;
    const flush = () => {
      if (column === null) return;
      const x = left + column + 0.5;
      if (pen) {
        context.lineTo(x, yOf(first));
      } else {
        drawn += 1;
        // A segment's first point gets a short stub, so a lone point between two gaps is seen.
        context.moveTo(x - 1.5, yOf(first));
        context.lineTo(x + 1.5, yOf(first));
      }
      if (peak !== low) {
        context.lineTo(x, yOf(low));
        context.lineTo(x, yOf(peak));
      }
      context.lineTo(x, yOf(last));
      pen = true;
      column = null;
    };
    for (let i = 0; i < times.length; i += 1) {
      const time = times[i];
      const value = values[i];
      if (time < from || time > to) continue;
      if (value == null || !Number.isFinite(value) || (lastTime !== null && gap && time - lastTime > gap)) {
        flush();
        pen = false;
        if (value == null || !Number.isFinite(value)) {
          lastTime = null;
          continue;
        }
      }
      lastTime = time;
      const x = Math.floor(((time - from) / span) * plotWidth);
      if (x !== column) {
        flush();
        column = x;
        low = peak = first = last = value;
      } else {
        if (value < low) low = value;
        if (value > peak) peak = value;
        last = value;
      }
    }
    flush();
    context.stroke();
    segments = Math.max(segments, drawn);
  });
  return { segments };
}
