package synthweb

import (
	"math/rand/v2"
	"strings"
)

// baseWords is the built-in vocabulary; syllableWords extends it so that
// page-specific word distributions can differ a lot.
const baseWords = `able about above across action actually add address after again against age
agency agent agree ahead air allow almost alone along already also although always among amount
analysis animal another answer anyone anything appear apply approach area argue arm around arrive
article artist assume attack attention audience author authority available avoid away baby back
bank base beat beautiful because become bed before begin behavior behind believe benefit best
better between beyond big bill billion bit black blood blue board body book born both box boy
break bring brother budget build building business buy call camera campaign cancer candidate
capital car card care career carry case catch cause cell center central century certain chair
challenge chance change character charge check child choice choose church citizen city civil
claim class clear clearly close coach cold collection college color come commercial common
community company compare computer concern condition conference congress consider consumer
contain continue control cost could country couple course court cover create crime cultural
culture cup current customer cut dark data daughter dead deal death debate decade decide
decision deep defense degree democrat describe design despite detail determine develop
development difference different difficult dinner direction director discover discuss disease
doctor dog door down draw dream drive drop drug during each early east easy economic economy
edge education effect effort eight either election else employee energy enjoy enough enter
entire environment especially establish evening event ever every evidence exactly example
executive exist expect experience expert explain eye face fact factor fail fall family far fast
father fear federal feel feeling field fight figure fill film final finally financial find fine
finger finish fire firm first fish five floor fly focus follow food foot force foreign forget
form former forward four free friend front full fund future game garden gas general generation
girl give glass goal good government great green ground group grow growth guess gun guy hair
half hand hang happen happy hard have head health hear heart heat heavy help here herself high
himself history hold home hope hospital hot hotel hour house however huge human hundred husband
idea identify image imagine impact important improve include including increase indeed indicate
individual industry information inside instead institution interest interesting international
interview into investment involve issue item itself join just keep key kid kill kind kitchen
know knowledge land language large last late later laugh lawyer lay lead leader learn least
leave left legal less letter level life light like likely line list listen little live local
long look lose loss lot love low machine magazine main maintain major majority make manage
management manager many market marriage material matter maybe mean measure media medical meet
meeting member memory mention message method middle might military million mind minute miss
mission model modern moment money month more morning most mother mouth move movement movie much
music must myself name nation national natural nature near nearly necessary need network never
news newspaper next nice night none north note nothing notice number occur offer office officer
official often once only onto open operation opportunity option order organization other others
outside owner page pain painting paper parent part participant particular partner party pass
past patient pattern peace people perform perhaps period person personal phone physical pick
picture piece place plan plant play player point police policy political poor popular
population position positive possible power practice prepare present president pressure pretty
prevent price private probably problem process produce product production professional
professor program project property protect prove provide public pull purpose push quality
question quickly quite race radio raise range rate rather reach read ready real reality realize
really reason receive recent recently recognize record reduce reflect region relate remain
remember remove report represent require research resource respond response rest result return
reveal rich right rise risk road rock role room rule safe same save scene school science score
season seat second section security seek seem sell send senior sense series serious serve
service seven several shake share shoot short shot should shoulder show side sign significant
similar simple simply since sing single sister site situation size skill skin small smile
social society soldier some somebody someone something sometimes song soon sort sound source
south southern space speak special specific speech spend sport spring staff stage stand
standard star start state statement station stay step still stock stop store story strategy
street strong structure student study stuff style subject success successful such suddenly
suffer suggest summer support sure surface system table take talk task teach teacher team
technology television tell tend term test thank themselves theory thing think third those
though thought thousand threat three through throughout throw thus today together tonight total
tough toward town trade traditional training travel treat treatment tree trial trip trouble
true truth turn type under understand unit until upon usually value various very victim view
violence visit voice vote wait walk wall want watch water weapon wear week weight well west
western what whatever wheel when where whether which while white whole whom whose wide wife
will wind window wish with within without woman wonder word work worker world worry would write
writer wrong yard yeah year young yourself`

var (
	syllableOnsets = []string{"b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "br", "cl", "st", "tr"}
	syllableVowels = []string{"a", "e", "i", "o", "u", "ai", "ea", "ou"}
	syllableCodas  = []string{"", "n", "r", "s", "l", "nd", "st"}
)

// newVocabulary returns the base words plus deterministic made-up words.
func newVocabulary(seed int64) []string {
	words := strings.Fields(baseWords)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	seen := make(map[string]bool, 2*len(words))
	for _, w := range words {
		seen[w] = true
	}
	for len(words) < 2000 {
		var b strings.Builder
		for range 2 + rng.IntN(2) {
			b.WriteString(syllableOnsets[rng.IntN(len(syllableOnsets))])
			b.WriteString(syllableVowels[rng.IntN(len(syllableVowels))])
			b.WriteString(syllableCodas[rng.IntN(len(syllableCodas))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// textGen writes prose whose word frequencies follow a Zipf law over a
// page-specific permutation of the vocabulary: each page has its own "topic"
// words, which keeps SimHash fingerprints of different pages far apart.
type textGen struct {
	rng   *rand.Rand
	vocab []string
	perm  []int
	zipf  *rand.Zipf
}

func newTextGen(vocab []string, rng *rand.Rand) *textGen {
	return &textGen{
		rng:   rng,
		vocab: vocab,
		perm:  rng.Perm(len(vocab)),
		zipf:  rand.NewZipf(rng, 1.15, 3, uint64(len(vocab)-1)),
	}
}

func (g *textGen) word() string { return g.vocab[g.perm[g.zipf.Uint64()]] }

// words returns n words.
func (g *textGen) words(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = g.word()
	}
	return out
}

// sentence returns a capitalised sentence of 6-15 words.
func (g *textGen) sentence() string {
	return sentenceOf(g.words(6 + g.rng.IntN(10)))
}

func sentenceOf(ws []string) string {
	s := strings.Join(ws, " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// title returns a 3-6 word title.
func (g *textGen) title() string {
	ws := g.words(3 + g.rng.IntN(4))
	for i, w := range ws {
		ws[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(ws, " ")
}

// paragraphs returns paragraphs totalling at least n bytes (at least one).
func (g *textGen) paragraphs(n int) []string {
	var out []string
	total := 0
	for len(out) == 0 || total < n {
		var b strings.Builder
		for range 3 + g.rng.IntN(4) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(g.sentence())
		}
		out = append(out, b.String())
		total += b.Len() + len("<p></p>\n")
	}
	return out
}
