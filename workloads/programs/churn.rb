# Allocation-heavy Ruby of our own: object churn, string building, hash
# growth. ruby churn.rb N
n = Integer(ARGV[0])
Item = Struct.new(:id, :name, :tags)
live = []
n.times do |i|
  live << Item.new(i, "item-#{i}-" * (1 + i % 5), [i.to_s, (i * 7).to_s(16)])
  live.shift(live.size / 2) if live.size > 5000
end
text = +""
(n / 4).times { |i| text << "line #{i} #{'x' * (i % 31)}\n" }
words = text.split
h = {}
words.each_with_index { |w, i| h["#{w}:#{i % 1000}"] = w * 2 }
raise "bad" unless h.size > 0 && live.size > 0
puts "ok #{h.size}"
