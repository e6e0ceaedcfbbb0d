// Draws the report's charts with Apache ECharts from the chart specs dbmark
// wrote into #dbmark-data. Each chart element gets data-points: the number
// of points ECharts holds for it, which the browser tests check.
(function () {
  'use strict';
  var spec = JSON.parse(document.getElementById('dbmark-data').textContent);
  var palette = ['#2456a6', '#d1603d', '#3f8f4f', '#8a4fb0', '#c49a1a', '#2a9d9a', '#b03a6f', '#6b7280',
    '#1f3b73', '#e08e45', '#5fa35f', '#a07cc5'];

  function fmt(v) {
    var a = Math.abs(v);
    if (a >= 1e9) return +(v / 1e9).toPrecision(3) + 'G';
    if (a >= 1e6) return +(v / 1e6).toPrecision(3) + 'M';
    if (a >= 1e4) return +(v / 1e3).toPrecision(3) + 'k';
    return +v.toPrecision(4) + '';
  }

  // 1/(1-q) back to a percentile label: 10 -> 90%, 1000 -> 99.9%.
  function percentileLabel(x) {
    if (x <= 1) return '0%';
    return +((1 - 1 / x) * 100).toPrecision(6) + '%';
  }

  function axisName(name, gap) {
    return { name: name, nameLocation: 'middle', nameGap: gap };
  }

  function base(c) {
    return {
      animation: false,
      color: palette,
      textStyle: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif' },
      grid: { left: 72, right: 28, top: 40, bottom: 48 },
      legend: { type: 'scroll', top: 0 },
      tooltip: { trigger: c.kind === 'box' ? 'item' : 'axis', confine: true },
      yAxis: Object.assign({ type: 'value', axisLabel: { formatter: fmt } }, axisName(c.yName, 56))
    };
  }

  // areas are x ranges to shade, each item styled: the chart's shade
  // (warm-up, a lone run's dips) in grey, a run's dips among several in
  // its line's colour.
  function areas(bands, color, opacity, labelColor) {
    return (bands || []).map(function (b) {
      return [{ xAxis: b.from, name: b.label, itemStyle: { color: color, opacity: opacity }, label: { color: labelColor || color } },
        { xAxis: b.to }];
    });
  }

  function markArea(data) {
    if (!data.length) return undefined;
    return { silent: true, label: { position: 'insideTop' }, data: data };
  }

  var specs = {};
  spec.charts.forEach(function (c) { specs[c.id] = c; });

  // overlaid is the counter named name drawn on a second y axis of o, a
  // dashed line per run: from its own chart's series, or its own.
  function overlaid(o, c, name) {
    var ov = (c.overlays || []).filter(function (v) { return v.name === name; })[0];
    if (!ov) return;
    var ser = ov.chart ? specs[ov.chart].series : ov.series;
    o.yAxis = [o.yAxis, Object.assign({
      type: 'value', position: 'right', splitLine: { show: false }, axisLabel: { formatter: fmt }
    }, axisName(ov.name, 56))];
    o.grid.right = 80;
    ser.forEach(function (s) {
      o.series.push({
        type: 'line', name: ser.length > 1 || c.series.length > 1 ? ov.name + ' ' + s.name : ov.name,
        data: broken(s), yAxisIndex: 1, showSymbol: false, lineStyle: { type: 'dashed', width: 1.5 }
      });
    });
  }

  function option(c, overlay) {
    var o = base(c);
    switch (c.kind) {
      case 'line':
        if (c.xCategories) {
          o.xAxis = Object.assign({ type: 'category', data: c.xCategories }, axisName(c.xName, 28));
          o.series = c.series.map(function (s) {
            return { type: 'line', name: s.name, data: s.values, connectNulls: true, symbolSize: 7 };
          });
        } else {
          // The axis ends at the run's end, between two ticks as often as
          // not: its label is dropped where it would crowd the last tick's.
          o.xAxis = Object.assign({ type: 'value', min: 0, max: c.xMax || null, axisLabel: { hideOverlap: true } }, axisName(c.xName, 28));
          o.series = c.series.map(function (s, i) {
            var own = areas(s.marks, palette[i % palette.length], 0.12);
            return {
              type: 'line', name: s.name, data: broken(s), showSymbol: s.points.length < 40, symbolSize: 4,
              markArea: markArea(i === 0 ? areas(c.shade, '#9aa3b2', 0.2, '#5b6475').concat(own) : own)
            };
          });
          if (overlay) overlaid(o, c, overlay);
        }
        return o;
      case 'bar':
        o.xAxis = Object.assign({ type: 'category', data: c.xCategories }, axisName(c.xName, 28));
        if (c.yLog) Object.assign(o.yAxis, { type: 'log', min: c.yLog, startValue: c.yLog }); // bars rise from the axis' foot
        o.series = c.series.map(function (s) {
          return { type: 'bar', name: s.name, data: s.values, itemStyle: s.color ? { color: s.color } : undefined };
        });
        return o;
      case 'box':
        // Several series are the boxes of each value of the other axes, side
        // by side in each category; a cell with no box is left empty.
        if (c.series.length < 2) o.legend = undefined;
        o.xAxis = Object.assign({ type: 'category', data: c.xCategories }, axisName(c.xName, 28));
        o.series = c.series.map(function (s) {
          return { type: 'boxplot', name: s.name, data: s.boxes.map(function (b) { return b || '-'; }) };
        });
        return o;
      case 'percentile':
        // Latencies span microseconds to seconds: a log scale shows both ends.
        o.yAxis.type = 'log';
        o.xAxis = Object.assign({
          type: 'log', logBase: 10, min: 1,
          axisLabel: { formatter: percentileLabel }
        }, axisName(c.xName, 28));
        o.tooltip.formatter = function (ps) {
          return ps.map(function (p) {
            // The tooltip is HTML: names come from results and may be hostile.
            return p.marker + echarts.format.encodeHTML(p.seriesName) + ': ' + percentileLabel(p.value[0]) + ' ' +
              fmt(p.value[1]) + ' ' + echarts.format.encodeHTML(c.yName);
          }).join('<br>');
        };
        o.series = c.series.map(function (s) {
          return { type: 'line', name: s.name, data: s.points, showSymbol: false };
        });
        return o;
    }
    throw new Error('unknown chart kind ' + c.kind);
  }

  // broken is a series' points with an empty value ('-') before each of
  // its breaks: ECharts draws a gap there, not a line across the samples
  // that are missing.
  function broken(s) {
    if (!s.breaks || !s.breaks.length) return s.points;
    var out = [], b = 0;
    s.points.forEach(function (p, i) {
      if (b < s.breaks.length && s.breaks[b] === i) {
        out.push('-');
        b++;
      }
      out.push(p);
    });
    return out;
  }

  function drawnPoints(chart) {
    var n = 0;
    (chart.getOption().series || []).forEach(function (s) {
      (s.data || []).forEach(function (d) { if (d !== null && d !== undefined && d !== '-') n++; });
    });
    return n;
  }

  // A select in the chart's caption lays one of c.overlays over it.
  function overlaySelect(chart, el, c) {
    var cap = el.parentNode && el.parentNode.querySelector('figcaption');
    if (!cap || !c.overlays || !c.overlays.length) return;
    var label = document.createElement('label');
    label.className = 'overlay';
    label.appendChild(document.createTextNode('with a counter: '));
    var sel = document.createElement('select');
    sel.setAttribute('data-overlay-of', c.id);
    [''].concat(c.overlays.map(function (v) { return v.name; })).forEach(function (name) {
      var opt = document.createElement('option');
      opt.value = name;
      opt.textContent = name || 'none'; // textContent: names come from results
      sel.appendChild(opt);
    });
    sel.addEventListener('change', function () {
      chart.setOption(option(c, sel.value), true);
      el.setAttribute('data-overlay', sel.value);
      el.setAttribute('data-points', String(drawnPoints(chart)));
    });
    label.appendChild(sel);
    cap.appendChild(label);
  }

  // One cursor for the time charts of a group: echarts.connect passes
  // the axis pointer on by its value on the x axis, so hovering any chart
  // of the group, wide or half-width, shows the same second on all of
  // them. Each chart's data-cursor is the time its pointer shows.
  function recordCursor(chart, el, c) {
    if (!c.group || c.xCategories) return;
    chart.on('updateAxisPointer', function (e) {
      var x = (e.axesInfo || []).filter(function (a) { return a.axisDim === 'x'; })[0];
      if (x) el.setAttribute('data-cursor', String(x.value));
      else el.removeAttribute('data-cursor');
    });
  }

  var charts = [];
  spec.charts.forEach(function (c) {
    var el = document.getElementById(c.id);
    try {
      var chart = echarts.init(el, null, { renderer: 'svg' });
      chart.setOption(option(c));
      el.setAttribute('data-points', String(drawnPoints(chart)));
      if (c.group) chart.group = c.group;
      overlaySelect(chart, el, c);
      recordCursor(chart, el, c);
      charts.push(chart);
    } catch (e) {
      el.setAttribute('data-error', String(e));
      console.error('chart ' + c.id + ': ' + e);
    }
  });

  var groups = {};
  spec.charts.forEach(function (c) { if (c.group) groups[c.group] = true; });
  Object.keys(groups).forEach(function (g) { echarts.connect(g); });

  // Charts are sized by their boxes: redraw them when the page's layout
  // changes, printing included.
  function resize() { charts.forEach(function (c) { c.resize(); }); }
  window.addEventListener('resize', resize);
  window.addEventListener('beforeprint', resize);
  window.addEventListener('afterprint', resize);
  if (window.matchMedia) window.matchMedia('print').addEventListener('change', resize);
  document.body.setAttribute('data-charts', String(charts.length));
})();
