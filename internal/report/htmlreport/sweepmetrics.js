// The metric picker: a chart whose spec lists choices gets a list above it,
// and picking a metric draws that metric's series in place of the chart's
// own. The chart element's data-metric names what it shows, and its
// data-points counts what it draws, as the page's script does.
(function () {
  'use strict';
  var data = document.getElementById('dbmark-data');
  if (!data || typeof echarts === 'undefined') return;
  var spec = JSON.parse(data.textContent);
  (spec.charts || []).forEach(function (c) {
    if (!c.choices || !c.choices.length) return;
    var el = document.getElementById(c.id);
    var chart = el && echarts.getInstanceByDom(el);
    if (!chart) return;
    var caption = el.parentNode.querySelector('figcaption');
    var pick = document.createElement('select');
    pick.className = 'metric-pick';
    pick.setAttribute('aria-label', 'metric');
    c.choices.forEach(function (ch, i) {
      var o = document.createElement('option');
      o.value = String(i);
      o.textContent = ch.name; // text, never HTML: names come from results
      pick.appendChild(o);
    });
    function show(ch) {
      chart.setOption({
        yAxis: { name: ch.yName },
        series: ch.series.map(function (s) {
          return { type: 'line', name: s.name, data: s.values, connectNulls: true, symbolSize: 7 };
        })
      }, { replaceMerge: ['series'] });
      var n = 0;
      ch.series.forEach(function (s) { s.values.forEach(function (v) { if (v !== null) n++; }); });
      el.setAttribute('data-points', String(n));
      el.setAttribute('data-metric', ch.name);
      if (caption) caption.textContent = ch.name + ' by ' + c.xName;
    }
    pick.addEventListener('change', function () { show(c.choices[+pick.value]); });
    el.parentNode.insertBefore(pick, el);
    el.setAttribute('data-metric', c.choices[0].name);
    if (caption) caption.textContent = c.choices[0].name + ' by ' + c.xName;
  });
})();
